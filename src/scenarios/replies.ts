// Owns the answers that forced responses and scenario rules give instead of the handler: a realistic
// HttpError for an error status, or the operation's documented example for a success status.
import type { Deps } from '../deps.js';
import type { Reply } from '../http/context.js';
import { Errors, templateForStatus, ApiError } from '../errors.js';
import { rateLimitMessage } from '../http/rate-limit.js';
import { documentOperations, loadDocument } from '../http/openapi.js';
import type { Account } from '../store/store.js';
import { followRefs } from '../http/json-pointer.js';

type Json = Record<string, unknown>;

interface DocumentedResponse {
  example?: unknown;
  hasBody: boolean;
}

let byOperation: Map<string, Map<string, DocumentedResponse>> | undefined;

function resolveRef(document: Json, value: unknown): unknown {
  return followRefs(document, value);
}

/** The documented responses of every operation, by status: built once from the API document. */
function documented(): Map<string, Map<string, DocumentedResponse>> {
  if (byOperation) return byOperation;
  // The document is parsed YAML, so plain JSON data; openapi-backend's Document type has no index signature.
  const document = loadDocument('openapi').document as unknown as Json;
  byOperation = new Map();
  for (const { operationId, operation } of documentOperations()) {
    const op = operation as Json;
    const statuses = new Map<string, DocumentedResponse>();
    for (const [status, raw] of Object.entries((op.responses ?? {}) as Json)) {
      const response = resolveRef(document, raw) as Json | undefined;
      const content = response?.content as Record<string, Json> | undefined;
      const media = content?.['application/json'] ?? (content ? Object.values(content)[0] : undefined);
      let example = media?.example;
      if (example === undefined && media?.examples && typeof media.examples === 'object') {
        const first = Object.values(media.examples as Json)[0];
        example = (resolveRef(document, first) as Json | undefined)?.value;
      }
      statuses.set(status, { example: resolveRef(document, example), hasBody: Boolean(media) });
    }
    byOperation.set(operationId, statuses);
  }
  return byOperation;
}

/** The statuses an operation documents (e.g. ['201', '400', '401', ...]). */
export function documentedStatuses(operationId: string): string[] {
  return [...(documented().get(operationId)?.keys() ?? [])].filter((s) => /^\d{3}$/.test(s));
}

/**
 * Why `status` cannot be forced on an operation (by Prefer or a scenario rule without a body), or
 * undefined when it can. Only a status the operation documents may be answered, so a generated client
 * always has a type for what it receives; a success status also needs the documented example.
 */
export function unforceable(operationId: string, status: number): string | undefined {
  const answerable = documentedStatuses(operationId).filter((s) => Number(s) >= 400 || exampleReply(operationId, Number(s)));
  if (answerable.includes(String(status))) return undefined;
  return `${status} is not an answer ${operationId} documents (it documents ${answerable.join(', ') || 'none'})`;
}

/**
 * The documented success answer: its example body (a copy), or no body when the status documents
 * none. Undefined when the operation does not document that success status, or documents a body
 * without an example: answering it would break the contract (an empty 200 where a body is promised).
 */
export function exampleReply(operationId: string, status: number): Reply | undefined {
  if (status < 200 || status > 299) return undefined;
  const response = documented().get(operationId)?.get(String(status));
  if (!response) return undefined;
  if (!response.hasBody) return { status };
  if (response.example === undefined) return undefined;
  return { status, body: structuredClone(response.example) };
}

/** A realistic HttpError for a documented error status, as the real service would word it. */
export function errorReplyFor(deps: Deps, account: Account, status: number, override: { code?: string; message?: string } = {}): Reply {
  const template = templateForStatus(status);
  if (!template) throw new Error(`no error template answers ${status}: add one to src/errors.ts`);
  let message = template.message;
  const headers: Record<string, string> = {};
  if (template === Errors.rateLimited) {
    const limit = deps.partners.rateLimitFor(account.partnerId, deps.config.rateLimit) || 5;
    message = rateLimitMessage(limit);
    // The checkout client honours Retry-After on 429; the real limiter's window is one second.
    headers['Retry-After'] = '1';
  }
  if (status === 503) headers['Retry-After'] = '1';
  const error = new ApiError({ ...template, code: override.code ?? template.code }, { message: override.message ?? message, headers });
  return { status, headers: error.headers, body: error.body };
}
