// Owns logging: one pino logger, structured, with secrets redacted wherever they could appear; the
// access line (one per request, from pino-http); and the output format: pretty (pino-pretty) when
// stdout is a terminal, JSON lines otherwise. Every line after the CLI's startup line goes through it.
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { exchange } from './http/exchange.js';

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

/** The fields of an access line, besides pino's level, time and msg. */
export const ACCESS_FIELDS = ['method', 'path', 'status', 'ms', 'account', 'operation'] as const;

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty). Default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go. Default: stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const settings: pino.LoggerOptions = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: undefined, serializers: { err: serializeError } };
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  if (level === 'silent' || !pretty) return options.destination ? pino(settings, options.destination) : pino(settings);
  return pino(settings, prettyStream(options.destination));
}

/**
 * pino's error serializer, with the error's name as its `type` rather than its class's name: the
 * command line runs a minified bundle (scripts/bundle-cli.mjs), in which classes have short made-up
 * names, while every error class of the sandbox names its errors.
 */
function serializeError(error: Error): pino.SerializedError {
  const serialized = pino.stdSerializers.err(error);
  if (error instanceof Error) serialized.type = error.name;
  return serialized;
}

/**
 * pino-pretty in this process, loaded only when a terminal will read the lines, so a sandbox started
 * by CI or a test runner (stdout not a TTY) never loads it. Synchronous, so a line printed just
 * before exit is not lost. An access line is one line: its message already says everything, so its
 * fields are not repeated under it; other lines keep their fields on the same line.
 */
function prettyStream(destination?: NodeJS.WritableStream): pino.DestinationStream {
  const load = createRequire(import.meta.url);
  const { PinoPretty } = load('pino-pretty') as typeof import('pino-pretty');
  return PinoPretty({
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', 'reqId', ...ACCESS_FIELDS].join(','),
    ...(destination ? { destination } : {}),
  });
}

type Req = IncomingMessage & { originalUrl?: string };

/** The path health checks ask (Docker's HEALTHCHECK, Testcontainers' wait strategies, probes). */
export const HEALTH_PATH = '/_sandbox/health';

function isHealthCheck(req: Req): boolean {
  const url = req.originalUrl ?? req.url ?? '';
  return url === HEALTH_PATH || url.startsWith(`${HEALTH_PATH}?`);
}
type Res = ServerResponse;

/**
 * The access line: method, path (never the query string), status, milliseconds, account and
 * operation. No headers and no bodies, so no credential, token or bank number can reach it.
 * 500 (an unexpected failure) is logged at error, other 5xx (answers forced by Prefer or a scenario)
 * at warn, a health check that answered at debug (a container's health check asks every few seconds:
 * at info its lines would bury the traffic a person reads), everything else at info.
 */
export function accessLog(logger: Logger): HttpLogger {
  const fields = (req: Req, res: Res, ms: number) => {
    const path = (req.originalUrl ?? req.url ?? '/').split('?')[0];
    return {
      method: req.method ?? 'GET',
      path,
      status: res.statusCode,
      ms,
      account: exchange(res).account?.id ?? null,
      operation: exchange(res).operationId ?? null,
    };
  };
  const message = (req: Req, res: Res, ms: number) => {
    const f = fields(req, res, ms);
    const who = [f.account, f.operation].filter(Boolean).join(' ');
    return `${f.method} ${f.path} ${f.status} ${ms} ms${who ? ` (${who})` : ''}`;
  };
  return pinoHttp({
    logger,
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (req, res, err) => {
      if (err || res.statusCode === 500) return 'error';
      if (res.statusCode >= 500) return 'warn';
      return isHealthCheck(req) ? 'debug' : 'info';
    },
    customSuccessObject: (req, res, value) => fields(req, res, (value as { responseTime: number }).responseTime),
    customErrorObject: (req, res, _error, value) => fields(req, res, (value as { responseTime: number }).responseTime),
    customSuccessMessage: (req, res, ms) => message(req, res, ms),
    // pino-http passes the response time as a fourth argument its types do not declare.
    customErrorMessage: ((req: Req, res: Res, _error: Error, ms: number) => message(req, res, ms)) as (req: Req, res: Res, error: Error) => string,
  });
}
