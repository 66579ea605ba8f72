// Owns the payment-methods feature: a customer's cards and bank accounts.
import type { Feature } from '../../feature.js';
import { paymentMethodHandlers } from './handlers.js';

export const paymentMethodsFeature: Feature = { name: 'payment-methods', handlers: paymentMethodHandlers };
