// Owns the typed HTTP client the test client is made of: openapi-fetch over the paths generated from
// an OpenAPI document (openapi-typescript), with the answer's data returned as its documented type and
// every error status thrown as a SandboxRequestError carrying the HttpError. Authentication is a
// function of the caller's (an access token, the admin token); a 401 drops the token and the request
// is sent once more with a fresh one.
import createClient, { type Client, type ClientPathsWithMethod, type MaybeOptionalInit, type MethodResponse } from 'openapi-fetch';
import { SandboxRequestError, unreachable, type SandboxErrorBody } from './errors.js';

/** The methods the sandbox's documents use. */
export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** A generated `paths` interface: each path has a (possibly `never`) entry per method. */
export type PathsOf<Paths> = { [Path in keyof Paths]: Partial<Record<HttpMethod, unknown>> };

/** The keys of T that are required (no `{}` satisfies them). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The init argument: optional when nothing in it is required (a path without parameters or body). */
type InitArgs<Init> = [RequiredKeys<Init>] extends [never] ? [init?: Init] : [init: Init];

/**
 * One HTTP method of a typed client: `api.POST('/customers', { body })` resolves to the documented
 * answer (a Customer), or rejects with a SandboxRequestError for a 4xx or 5xx. The init is not
 * inferred (as openapi-fetch's is) but given its type, so a misspelt body field is an error too.
 */
export type TypedMethod<Paths extends PathsOf<Paths>, Method extends HttpMethod> = <
  Path extends ClientPathsWithMethod<Client<Paths>, Method>,
>(path: Path, ...init: InitArgs<MaybeOptionalInit<Paths[Path], Method>>) => Promise<MethodResponse<Client<Paths>, Method, Path>>;

export interface TypedClient<Paths extends PathsOf<Paths>> {
  GET: TypedMethod<Paths, 'get'>;
  POST: TypedMethod<Paths, 'post'>;
  PUT: TypedMethod<Paths, 'put'>;
  PATCH: TypedMethod<Paths, 'patch'>;
  DELETE: TypedMethod<Paths, 'delete'>;
  /**
   * openapi-fetch's client itself, authenticated the same way: `{ data, error, response }` for every
   * status, nothing thrown. For tests that read a status code or a header, or expect an error.
   */
  raw: Client<Paths>;
}

export interface Authenticator {
  /** The headers every request carries (Authorization, X-Sandbox-Admin-Token). */
  headers(): Promise<Record<string, string>>;
  /** The sandbox answered 401 to a request sent with `authorization`: true when sending it again may succeed. */
  refused?(authorization: string | null): boolean;
}

export interface TypedClientOptions {
  baseUrl: string;
  auth: Authenticator;
  fetch: typeof fetch;
}

/** A typed client whose methods return the data and throw SandboxRequestError. */
export function typedClient<Paths extends PathsOf<Paths>>(options: TypedClientOptions): TypedClient<Paths> {
  const { auth } = options;
  // Which requests the sandbox refused with 401 and may be sent again with a new token.
  const retryable = new WeakSet<Response>();
  const raw = createClient<Paths>({
    baseUrl: options.baseUrl,
    // Looked up at each request, so a test's fetch mock (or a later global) is used as it would be by openapi-fetch.
    fetch: (request: Request) => options.fetch(request).catch((error: unknown) => {
      throw unreachable(request.method, request.url, error);
    }),
  });
  raw.use({
    async onRequest({ request }) {
      for (const [name, value] of Object.entries(await auth.headers())) {
        if (!request.headers.has(name)) request.headers.set(name, value);
      }
      return request;
    },
    onResponse({ request, response }) {
      if (response.status === 401 && auth.refused?.(request.headers.get('authorization'))) retryable.add(response);
      return undefined;
    },
  });

  const method = (name: Uppercase<HttpMethod>) =>
    async (path: string, init?: Record<string, unknown>): Promise<unknown> => {
      // openapi-fetch's generic signature cannot be named for a path chosen at run time.
      const send = raw[name] as (path: string, init?: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      let result = await send(path, init);
      if (retryable.has(result.response)) result = await send(path, init);
      if (result.response.ok) return result.data;
      throw new SandboxRequestError(result.response.status, errorBody(result.error), `${name} ${requestPath(result.response, path)}`);
    };

  return {
    GET: method('GET') as TypedMethod<Paths, 'get'>,
    POST: method('POST') as TypedMethod<Paths, 'post'>,
    PUT: method('PUT') as TypedMethod<Paths, 'put'>,
    PATCH: method('PATCH') as TypedMethod<Paths, 'patch'>,
    DELETE: method('DELETE') as TypedMethod<Paths, 'delete'>,
    raw,
  };
}

/** openapi-fetch gives an error body as parsed JSON, or as text when it is not JSON. */
function errorBody(error: unknown): SandboxErrorBody | undefined {
  if (error === undefined || error === null || error === '') return undefined;
  if (typeof error === 'object') return error as SandboxErrorBody;
  return { message: (typeof error === 'string' ? error : JSON.stringify(error)).slice(0, 200) };
}

/** The path and query the request went to (the template when the answer has no URL). */
function requestPath(response: Response, template: string): string {
  try {
    const url = new URL(response.url);
    return `${url.pathname}${url.search}`;
  } catch {
    return template;
  }
}
