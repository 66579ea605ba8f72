// Owns logging: one pino logger, structured, with secrets redacted wherever they could appear.
import { pino } from 'pino';

export type Logger = pino.Logger;

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  '*.client_secret',
  '*.secret_key',
  '*.account_number',
  '*.card_provider_token',
  '*.cvv_secret',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: undefined });
}
