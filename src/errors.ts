// Owns every HttpError the sandbox can answer: one named template per code, and the ApiError that carries it.
// At the bottom of the module graph (it imports nothing: scripts/gen-errors.mjs runs it alone): the store, the domain and the HTTP layer all throw these.
// Handlers throw `new ApiError(Errors.x, {...})`; nothing else builds an error body by hand.

export interface ErrorTemplate {
  status: number;
  code: string;
  message: string;
}

function template(status: number, code: string, message: string): ErrorTemplate {
  return { status, code, message };
}

export const Errors = {
  badRequest: template(400, 'bad_request', 'The request is invalid.'),
  invalidJson: template(400, 'bad_request', 'The request body is not valid JSON.'),
  validation: template(400, 'bad_request', 'One or more fields are invalid.'),
  malformedUrl: template(400, 'bad_request', 'The request URL has malformed percent-encoding.'),
  invalidCursor: template(400, 'bad_request', 'The pagination cursor is invalid.'),
  invalidState400: template(400, 'invalid_state', 'The object is not in a state that allows this operation.'),
  malformedRequest: template(400, 'bad_request', 'The request is not valid HTTP.'),
  invalidGrant: template(400, 'invalid_request', 'grant_type must be client_credentials.'),
  invalidScope: template(400, 'invalid_scope', 'The requested scope is unknown or was not granted to the key.'),
  unauthorized: template(401, 'unauthorized', 'The access token is missing, invalid or expired.'),
  forbidden: template(403, 'forbidden', 'The access token does not grant the permission this operation needs.'),
  invalidClient: template(403, 'invalid_client', 'The client credentials are invalid.'),
  linkForbidden: template(403, 'forbidden', 'The link is invalid or has expired.'),
  notFound: template(404, 'not_found', 'The requested object was not found.'),
  routeNotFound: template(404, 'not_found', 'No such endpoint.'),
  /** A path of the document called with a method it does not list; the answer's Allow header names those it does. */
  methodNotAllowed: template(405, 'method_not_allowed', 'The path does not take this method; the Allow header lists those it takes.'),
  conflict: template(409, 'invalid_state', 'The object is not in a state that allows this operation.'),
  idempotencyConflict: template(409, 'idempotency_key_reused', 'This idempotency key was already used with a different request body.'),
  /**
   * Work that resumed after an await (a scenario delay, an upload, a fetch) on an account that a reset
   * or a restore replaced meanwhile: nothing was written, in either account.
   */
  accountReplaced: template(409, 'account_replaced', 'The account was reset or restored while this request was under way; nothing was written. Retry against the account as it is now.'),
  /** POST /_sandbox/snapshots with the name of a snapshot the partner keeps already, without `replace: true`. */
  snapshotExists: template(409, 'snapshot_exists', 'A snapshot of that name exists already; send replace: true to overwrite it, or choose another name.'),
  requestTimeout: template(408, 'request_timeout', 'The request did not arrive in time.'),
  payloadTooLarge: template(413, 'payload_too_large', 'The payload is larger than the limit.'),
  unsupportedMediaType: template(415, 'unsupported_media_type', 'The request body has a content type this operation does not accept.'),
  unprocessable: template(422, 'unprocessable_entity', 'The request could not be processed.'),
  vendorInvalidState: template(422, 'invalid_state', 'The vendor is not in a state that allows this operation.'),
  unknownVendor: template(422, 'unknown_vendor', 'The vendor does not exist.'),
  missingPayDate: template(422, 'missing_pay_date', 'A bill has no pay_date: set one with POST /bills/{id}/pay-date first.'),
  unsupportedInvoice: template(422, 'unsupported_invoice', 'Only invoices synced from an accounting integration accept a PDF.'),
  headersTooLarge: template(431, 'request_header_fields_too_large', 'The request headers are too large.'),
  /** A per-account cap of src/limits.ts (stored documents, webhook subscriptions): nothing was created. */
  limitReached: template(422, 'limit_reached', 'A limit of the account was reached; nothing was created.'),
  rateLimited: template(429, 'rate_limit_exceeded', 'Too many requests: the limit is {limit} requests per second per key.'),
  // After rateLimited: templateForStatus(429) (Prefer and scenario rules) must keep answering rate_limit_exceeded.
  tooManyStreams: template(429, 'too_many_streams', 'Too many live streams are open on this sandbox.'),
  internal: template(500, 'internal_error', 'An unexpected error occurred. Retry with back-off.'),
  /** Only with validateResponses (tests): an answer the OpenAPI document does not allow. */
  responseInvalid: template(500, 'response_validation_failed', 'The answer does not match the OpenAPI document.'),
  notImplemented: template(501, 'not_implemented', 'This operation is not implemented by the sandbox yet.'),
  serviceUnavailable: template(503, 'service_unavailable', 'The service is temporarily unavailable.'),
  /** With --data: the data file cannot be written (a full disk, an I/O error); nothing was changed. */
  /** Too many request bytes arriving at once (LIMITS.bodyBytesInFlight): this body was not read. */
  serverBusy: template(503, 'server_busy', 'The sandbox is receiving as many request bodies as it holds at once, so this one was not read and nothing was changed. Retry after the Retry-After seconds.'),
  storageUnavailable: template(503, 'storage_unavailable', 'The data file cannot be written, so nothing was changed. Retry after the Retry-After seconds.'),
} as const;

export interface ApiErrorDetail {
  message?: string;
  validation_errors?: Record<string, string>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly validationErrors: Record<string, string>;
  readonly headers: Record<string, string>;

  constructor(readonly template: ErrorTemplate, detail: ApiErrorDetail = {}) {
    // Both documents hold a message to 1,000 characters: one that lists many fields is cut, never sent longer.
    super(clipped(detail.message ?? template.message));
    this.name = 'ApiError';
    this.status = template.status;
    this.code = template.code;
    this.validationErrors = detail.validation_errors ? bounded(detail.validation_errors) : {};
    this.headers = detail.headers ?? {};
  }

  get body(): HttpErrorBody {
    return { code: this.code, message: this.message, validation_errors: this.validationErrors };
  }
}

/** The longest `message` the documents allow (HttpError.message maxLength). */
const MESSAGE_CHARS = 1000;

function clipped(message: string): string {
  return message.length <= MESSAGE_CHARS ? message : `${message.slice(0, MESSAGE_CHARS - 1)}…`;
}

/** LIMITS.validationErrorFields (src/limits.ts), here too since this module imports nothing; test/storable.test.ts holds them equal. */
export const VALIDATION_ERROR_FIELDS = 100;

/** The key of the entry that says how many fields validation_errors left out. */
export const MORE_FIELDS_KEY = '…';

/**
 * At most VALIDATION_ERROR_FIELDS fields, then one entry saying how many more (a list of 200,000 bad
 * items named every one: a 7 MB answer), each message clipped as `message` is.
 */
function bounded(fields: Record<string, string>): Record<string, string> {
  const names = Object.keys(fields);
  const kept = names.length > VALIDATION_ERROR_FIELDS ? names.slice(0, VALIDATION_ERROR_FIELDS) : names;
  const out: Record<string, string> = {};
  // Defined, not assigned: a field may be named "__proto__".
  for (const name of kept) Object.defineProperty(out, name, { value: clipped(fields[name]), enumerable: true, writable: true, configurable: true });
  if (kept.length < names.length) out[MORE_FIELDS_KEY] = `${names.length - kept.length} more fields are invalid`;
  return out;
}

export interface HttpErrorBody {
  code: string;
  message: string;
  validation_errors: Record<string, string>;
}

/**
 * A write the account or the data file refused (409 account_replaced, 503 storage_unavailable): work
 * that spans awaits (a job, a delivery run) stops quietly on it, and what the file holds is taken up
 * again (the replacement's own start, the recovery once the file takes writes); any other error is
 * the work's own failure.
 */
export function refusedWrite(error: unknown): boolean {
  return error instanceof ApiError && (error.code === Errors.accountReplaced.code || error.code === Errors.storageUnavailable.code);
}

/** validation_errors as one line of text ("amount must be a number; currency is required"), for messages and logs. */
export function describeFields(fields: Record<string, string>): string {
  return Object.entries(fields).map(([field, message]) => `${field} ${message}`).join('; ');
}

/** A 400 naming one or more fields: the common case for rules the schema cannot express. */
export function invalidFields(fields: Record<string, string>, message?: string): ApiError {
  return new ApiError(Errors.validation, { message: message ?? Errors.validation.message, validation_errors: fields });
}

/**
 * The first template of a status, used by forced responses and scenario rules. They answer only
 * statuses an operation documents, and every documented error status has a template (a test checks
 * it), so there is no made-up code outside the list HttpError.code publishes.
 */
export function templateForStatus(status: number): ErrorTemplate | undefined {
  return Object.values(Errors).find((t) => t.status === status);
}
