// Owns the access token of one API key for the test client: got from POST /oauth/token on first use,
// reused while it lives, renewed before `expires_in` runs out (tokens live in real time, never on the
// account clock), and dropped when the sandbox refuses it (a token expired through the control plane,
// a restarted sandbox), so the next request gets a fresh one.
import { readErrorBody, SandboxRequestError, unreachable } from './errors.js';

/** One environment's client credentials, as the sandbox names them. */
export interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

export type Environment = 'production' | 'demo';

/** The path of an environment's API (and token endpoint) under the sandbox's origin. */
export const ENVIRONMENT_PREFIX: Readonly<Record<Environment, string>> = { production: '', demo: '/demo' };

/** A client_credentials token request, as a partner's client sends it (HTTP Basic, a form body). */
export function tokenRequest(credentials: ClientCredentials): RequestInit {
  return {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${credentials.client_id}:${credentials.client_secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  };
}

interface Held {
  token: string;
  /** Real milliseconds after which a request gets a new token instead. */
  renewAt: number;
}

export interface TokenSourceOptions {
  /** The sandbox's origin, e.g. http://127.0.0.1:4010. */
  origin: string;
  environment: Environment;
  credentials: ClientCredentials;
  fetch: typeof fetch;
  /** Real time in milliseconds (tests move it; the default is Date.now). */
  now?: () => number;
}

/** Renew this long before expiry, at most (a tenth of a short life instead), so no request carries a token about to lapse. */
const RENEW_MARGIN_MS = 60_000;

export class TokenSource {
  private held: Held | undefined;
  private pending: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: TokenSourceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The key's current access token, requested when there is none or it is about to expire. */
  get(): Promise<string> {
    if (this.held && this.now() < this.held.renewAt) return Promise.resolve(this.held.token);
    // Concurrent requests share one token request.
    this.pending ??= this.request().finally(() => { this.pending = undefined; });
    return this.pending;
  }

  /** The sandbox refused `token` (401): forget it, unless a newer one already replaced it. */
  drop(token: string | undefined): void {
    if (!token || this.held?.token === token) this.held = undefined;
  }

  private async request(): Promise<string> {
    const { origin, environment, credentials } = this.options;
    const path = `${ENVIRONMENT_PREFIX[environment]}/oauth/token`;
    const asked = this.now();
    const res = await this.options.fetch(`${origin}${path}`, tokenRequest(credentials)).catch((error: unknown) => {
      throw unreachable('POST', `${origin}${path}`, error);
    });
    if (!res.ok) throw new SandboxRequestError(res.status, await readErrorBody(res), `POST ${path} (client_id ${credentials.client_id})`);
    const body = (await res.json()) as { access_token: string; expires_in?: number };
    const lifeMs = (body.expires_in ?? 3600) * 1000;
    this.held = { token: body.access_token, renewAt: asked + lifeMs - Math.min(RENEW_MARGIN_MS, lifeMs / 10) };
    return body.access_token;
  }
}
