// Owns the catalogue: every parity case in report order, grouped by area.
import type { ParityCase } from '../case.js';
import { accessCases } from './access.js';
import { listCases } from './lists.js';
import { payableCases } from './payables.js';
import { platformCases } from './platform.js';
import { receivableCases } from './receivables.js';
import { validationCases } from './validation.js';

export const CASES: readonly ParityCase[] = [
  ...accessCases,
  ...listCases,
  ...validationCases,
  ...receivableCases,
  ...payableCases,
  ...platformCases,
];
