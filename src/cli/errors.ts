// Owns the command line's outcomes as exit codes: 0 success, 1 the sandbox refused (its HttpError),
// 2 a usage error, 3 the sandbox could not be reached. Commands throw these; program.ts prints them.

export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number, readonly details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CliError';
  }
}

/** A bad argument or option: exit 2. */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** The HttpError body the sandbox answered with (fields may be missing when something else answered). */
export interface SandboxErrorBody {
  code?: string;
  message?: string;
  validation_errors?: Record<string, string>;
}

/** The sandbox answered with an error status: exit 1, its HttpError printed. */
export class RefusedError extends CliError {
  constructor(readonly request: string, readonly status: number, readonly body: SandboxErrorBody) {
    const fields = Object.entries(body.validation_errors ?? {}).map(([field, why]) => `\n  ${field}: ${why}`).join('');
    super(`the sandbox refused ${request}: ${status}${body.code ? ` ${body.code}` : ''}${body.message ? `: ${body.message}` : ''}${fields}`, EXIT.refused, {
      status, code: body.code ?? null, message: body.message ?? null, validation_errors: body.validation_errors ?? {},
    });
  }
}

/** No answer at all: exit 3, with the URL tried and how to start a sandbox there. */
export class UnreachableError extends CliError {
  constructor(readonly url: string, cause: string) {
    const port = (() => {
      try {
        return new URL(url).port || '4010';
      } catch {
        return '4010';
      }
    })();
    super(`cannot reach the sandbox at ${url} (${cause}). Start one with \`npx billing-sandbox --port ${port}\` in another terminal, or point --url (SANDBOX_URL) at a running one.`, EXIT.unreachable, { url, cause });
  }
}
