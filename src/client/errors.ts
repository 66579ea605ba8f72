// Owns SandboxRequestError, the one error every client of the package throws when the sandbox answers
// with an HttpError: startSandbox()'s helpers, connect()'s `api` and `control`, the Testcontainers module.
// It lives in the light client module (no server code), so the package's entries share one class.
import type { HttpErrorBody } from '../errors.js';

/** The HttpError body the sandbox answers with (as read off the wire, so every field is optional). */
export type SandboxErrorBody = Partial<HttpErrorBody> & Record<string, unknown>;

/** An HttpError answered by the sandbox: `status`, the HttpError `body`, and which request it answered. */
export class SandboxRequestError extends Error {
  /** The HttpError's `code` (e.g. `not_found`), when the body had one. */
  readonly code: string | undefined;

  constructor(
    readonly status: number,
    readonly body: SandboxErrorBody | undefined,
    /** The request it answered, e.g. `POST /customers`. */
    readonly request: string,
  ) {
    super(`${request} answered ${status}${body?.code ? ` ${body.code}` : ''}${body?.message ? `: ${body.message}` : ''}${describeFields(body)}`);
    this.name = 'SandboxRequestError';
    this.code = typeof body?.code === 'string' ? body.code : undefined;
  }
}

/** " (amount must be a number; currency is required)": the fields a 400 names, so a failing test's message says which. */
function describeFields(body: SandboxErrorBody | undefined): string {
  const fields = body?.validation_errors;
  if (!fields || typeof fields !== 'object') return '';
  const entries = Object.entries(fields).slice(0, 5);
  return entries.length ? ` (${entries.map(([field, message]) => `${field} ${String(message)}`).join('; ')})` : '';
}

/** The answer's body: JSON when it parses, else its first 200 characters as `message`; undefined when empty. */
export async function readErrorBody(res: Response): Promise<SandboxErrorBody | undefined> {
  const text = await res.text().catch(() => '');
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as SandboxErrorBody) : { message: text.slice(0, 200) };
  } catch {
    return { message: text.slice(0, 200) };
  }
}

/** A request that got no answer at all: say where it went and why, keeping the cause. */
export function unreachable(method: string, url: string, error: unknown): Error {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error as Error).message;
  return new Error(`${method} ${url}: no answer from the sandbox (${why})`, { cause: error });
}
