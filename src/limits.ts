// Owns the one table of caps and retentions: every body, string, list, upload and in-memory
// structure that grows with traffic has its bound here, with the unit in its name. Code and tests
// read these constants; docs/limits.md lists the same rows.

const MB = 1024 * 1024;

export const LIMITS = {
  /** JSON request bodies (a 10 MB PDF in base64 is about 13.4 MB). Beyond: 413 payload_too_large. */
  jsonBodyBytes: 15 * MB,
  /** A request's headers in all (Node's default, set explicitly on the server). Beyond: 431. */
  headerBytes: 16 * 1024,
  /**
   * Request bodies being received at once, over every connection of a server, each counted at its
   * declared Content-Length (a chunked body at the JSON limit, the most it may hold) from its headers
   * until it is parsed or refused. Beyond: 503 server_busy with Retry-After, the body unread and the
   * connection closed; nothing is changed. 17 bodies of the largest kind at once.
   */
  bodyBytesInFlight: 256 * MB,
  /** Form (token endpoint) and YAML (scenario documents) bodies. Beyond: 413. */
  formBodyBytes: 1 * MB,
  /** PDF uploads, decoded content or fetched body (the spec's 10 MB). Beyond: 413. */
  pdfBytes: 10 * MB,
  /** Bill documents for OCR upload, decoded (sandbox choice, the same as PDFs). Beyond: 413. */
  billDocumentBytes: 10 * MB,
  /** Redirects followed when fetching a PDF url (the spec says a limit exists, not its value). */
  pdfRedirects: 5,
  /** Time for the whole PDF url fetch, DNS lookup included. */
  pdfFetchTimeoutMs: 10_000,
  /** `limit` of every paginated list (the spec gives the default 100, no maximum). Beyond: 400. */
  pageDefault: 100,
  pageMax: 500,
  /** Ids per bulk bill operation and items per vendor-payment request. Beyond: 400. */
  bulkItems: 100,
  /** Every amount, in currency units. Beyond: 400/422 naming the field. */
  amountMax: 1_000_000_000,
  /** A webhook subscription's endpoint_url. Beyond: 400. */
  webhookUrlChars: 2048,
  /** Webhook delivery retries before the account's queue pauses (the spec's 5). */
  webhookRetries: 5,
  /**
   * Copies a duplicate delivery drill sends after the delivery itself (a scenario's
   * `duplicate_delivery.count`, `POST /_sandbox/events` `duplicate`): a receiver that handles one
   * duplicate handles five; more would only hold the account's ordered queue. Beyond: 400 naming the field.
   */
  webhookDuplicateCopies: 5,
  /** Request journal entries kept per account (default; --journal-size changes it). */
  journalEntries: 500,
  /** Serialised size of one journal entry (request headers, query and body get half, the response body half). */
  journalEntryBytes: 16 * 1024,
  /** Items kept of an array in a journal entry; the rest become one marker saying how many. */
  journalArrayItems: 20,
  /** Fields kept of an object in a journal entry; the rest become one marker field ("…"). */
  journalObjectKeys: 100,
  /** Journal bytes kept per account; beyond, the oldest entries are dropped. */
  journalAccountBytes: 4 * MB,
  /**
   * The process-wide memory budget (default; --memory-budget / SANDBOX_MEMORY_BUDGET_MB change it):
   * the serialised bytes of every account's request journal, event log, webhook history and delivery
   * attempts together. Past it, the oldest entries of the whole process are evicted first, whichever
   * account holds them; each account keeps its newest entry of each, and queued deliveries and their
   * events are never evicted. Sized for Node's default heap of about 4 GB, leaving most of it to the
   * objects accounts create (not counted: they are the data a test makes). A journal entry's bytes
   * are its upper estimate, about twice what it holds in the heap.
   */
  memoryBudgetBytes: 512 * MB,
  /** Past the budget, evictions go this far under it at once (at most; a 64th of a smaller budget). */
  memoryBudgetSlackBytes: 1 * MB,
  /** Strings longer than this are shortened in journal entries. */
  journalStringChars: 2048,
  /** Nesting kept in journal entries; deeper values are replaced by a marker. */
  journalDepth: 32,
  /**
   * Nesting of every value stored from a request (src/http/storable.ts, "the door"): a request body
   * (JSON, or YAML counted on its text before it is parsed), a scenario document, a fixture file;
   * each object or array is a level. Beyond: 400 naming the field.
   */
  valueDepth: 64,
  /**
   * A scenario document (JSON or YAML body, --scenario file): its text, and its value as compact
   * JSON with each YAML alias counted where it is used. Beyond: 413 naming the field (or `body`).
   */
  scenarioBytes: 1 * MB,
  /**
   * Values (each scalar, object and array) of one request body or scenario document. Beyond: 413
   * naming the field where the count went past it. The largest body the documents allow (an
   * accounting sync of 400 items with 100 lines each) holds about 120,000; schema validation of a
   * 15 MB list of bad items once took minutes and gigabytes to list every one.
   */
  bodyValues: 200_000,
  /** Fields one HttpError names in validation_errors; beyond, one more entry ("…") says how many were left out. */
  validationErrorFields: 100,
  /** Alias uses a YAML document may resolve (the yaml library's maxAliasCount). Beyond: 400 naming `body`. */
  yamlAliases: 100,
  /** A --fixtures file. Beyond: the start is refused with the reason. */
  fixtureBytes: 10 * MB,
  /** One clock advance moves at most 100 years (of 365.25 days). Beyond: 400 naming seconds or to. */
  clockAdvanceMaxSeconds: 3_155_760_000,
  /** The latest instant an account clock reads (RFC 3339 has four-digit years). Beyond: 400. */
  clockLatest: '9999-12-31T23:59:59Z',
  /** Partners a server holds, the default one included (each has two accounts). Beyond: 422 on POST /_sandbox/partners. */
  partnersPerServer: 1_000,
  /**
   * API keys one partner holds, revoked ones included (they stay listed), both environments together.
   * Beyond: 422 limit_reached on POST /_sandbox/partners/{id}/keys; a full reset removes them.
   */
  keysPerPartner: 100,
  /** Due jobs run by one clock advance before it stops (a runaway guard). */
  jobsPerRun: 100_000,
  /** Failed due jobs kept per account (GET /_sandbox/clock); the oldest dropped. */
  failedJobsKept: 100,
  /** Live streams (GET /_sandbox/stream) open at once on one server. Beyond: 429 too_many_streams. */
  streamConnections: 32,
  /**
   * Live streams one partner (both environments) may hold at once: enough for `listen`,
   * `requests --follow` and an inspector tab per environment, with room to spare, while four busy
   * partners cannot fill the server. Beyond: 429 too_many_streams naming this cap.
   */
  streamConnectionsPerPartner: 8,
  /** Of streamConnections, the slots only the default partner may take (the inspector and `listen` use it). Beyond, for others: 429. */
  streamSlotsKeptForDefaultPartner: 4,
  /** Bytes of one stream a client has not read yet; beyond, the client is cut (it reconnects and re-reads history). */
  streamBufferBytes: 1 * MB,
  /** A heartbeat comment on every open stream this often (real time). */
  streamHeartbeatMs: 15_000,
  /** Lines of an invoice or a bill (create, patch, OCR extraction). Beyond: 400 naming line_items. */
  lineItems: 100,
  /** Payment methods one customer holds. Beyond: 422 naming the customer. */
  paymentMethodsPerCustomer: 100,
  /** Entries of a bill's status_history kept; older ones are dropped. */
  billStatusHistory: 1000,
  /** A bill's vendor_payments shown in its answer: the newest. */
  billVendorPaymentsShown: 100,
  /** A vendor's data requests listed: the newest. */
  vendorDataRequestsShown: 100,
  /** Transactions in one payout; a payment beyond starts another payout for that customer. */
  payoutTransactions: 1000,
  /** --scenario documents at start. Beyond: the start is refused. */
  globalScenarios: 100,
  /**
   * String lengths. The OpenAPI documents carry every string's maxLength (request validation refuses
   * longer ones with the field named); these are the ones the server also applies to text it reads
   * itself (OCR), and that tests compare with the documents.
   */
  nameChars: 255,
  textChars: 5000,
  emailChars: 254,
  urlChars: 2048,
  /**
   * Stored documents (invoice PDFs, bill uploads) one account keeps, on disk. Beyond: 422
   * limit_reached. Replaced invoice PDFs and reset accounts free theirs; a deleted bill keeps its
   * document (it stays readable with include_deleted).
   */
  blobBytesPerAccount: 100 * MB,
  /** Active webhook subscriptions per account (Stripe allows 16 endpoints). Beyond: 422 limit_reached. */
  webhookSubscriptionsPerAccount: 50,
  /** Receiver origins with a pool of kept-alive connections; beyond, the least recently used pool closes. */
  webhookReceiverPools: 256,
  /** Endpoint urls kept parsed for delivery attempts (their request options); beyond, the oldest is parsed again when used. */
  webhookParsedUrls: 256,
  /** Deleted (inactive) subscriptions still listed per account; the oldest beyond this are dropped. */
  webhookDeletedSubscriptionsKept: 100,
  /**
   * Webhook history kept per account: settled deliveries (GET /webhooks/events), the event log and
   * delivery attempts (GET /_sandbox/webhooks/deliveries), each at most this many. Past it, the oldest
   * are dropped down to a sixteenth below it at once (9,375), so each holds 9,375 to 10,000 when full.
   * Queued (pending or failed-awaiting-retry) deliveries and their events are never dropped.
   */
  webhookHistoryEntries: 10_000,
  /** ... and nothing older than this many days on the account clock (Stripe keeps events 30 days). */
  webhookHistoryDays: 30,
  /** Idempotency keys (checkout payments, vendor payments) are remembered this long on the account clock, as Stripe does. */
  idempotencyKeyHours: 24,
  /** ... and at most this many per account and kind, the oldest forgotten first. */
  idempotencyKeysPerAccount: 10_000,
  /** Scenario documents loaded through the control plane per account. Beyond: 422 limit_reached. */
  scenariosPerAccount: 100,
  /**
   * Verified access and checkout tokens remembered (signature and claims checked once per token, its
   * expiry and revocation on every use). Beyond: the oldest is forgotten and verified again when used.
   */
  verifiedTokens: 10_000,
  /**
   * Answers held for the end of their batch (src/http/answer-batch.ts), all together, counted as the
   * length of their text. An answer that would pass it is written at once, with the batch so far.
   */
  answerBatchBytes: 1 * MB,
  /**
   * Answer bytes one connection holds unflushed: what its socket has not sent yet (a whole write
   * counts until it is sent) and its pipelined answers waiting for their turn. Beyond: the
   * connection is dropped (reset). Above any answer the sandbox gives in the ordinary course
   * (a full journal page is about 4 MB, a PDF at most 10 MB).
   */
  connectionQueuedBytes: 32 * MB,
  /**
   * The same summed over every connection of a server (the command line runs one). Beyond: the
   * connections that went longest without taking a byte are dropped until it fits. A string counts
   * its length, and may take twice that in memory.
   */
  totalQueuedBytes: 64 * MB,
  /** A connection with unflushed answer bytes that takes none of them for this long (real time) is dropped. */
  sendTimeoutMs: 30_000,
  /** An idle kept-alive connection is closed after this long (node's default, set explicitly). */
  keepAliveTimeoutMs: 5_000,
  /** A request's headers must all arrive within this long (node's default, set explicitly). Beyond: 408 request_timeout. */
  headersTimeoutMs: 60_000,
  /** A whole request, headers and body, within this long (node's default, set explicitly). Beyond: 408 request_timeout. */
  requestTimeoutMs: 300_000,
  /**
   * Account snapshots one partner keeps (POST /_sandbox/snapshots), both environments together.
   * Beyond: 422 limit_reached; delete one first (a full reset removes them all).
   */
  snapshotsPerPartner: 20,
  /** One snapshot's document (its objects, history, queue, scenarios and keys as JSON). Beyond: 413 payload_too_large. */
  snapshotBytes: 64 * MB,
  /** Every snapshot of one partner together. Beyond: 422 limit_reached. */
  snapshotBytesPerPartner: 256 * MB,
  /** Every snapshot on the server together (kept in memory, outside the JavaScript heap). Beyond: 422 limit_reached. */
  snapshotBytesPerServer: 1024 * MB,
  /** Nesting of an imported snapshot document (POST /_sandbox/snapshots, --fixtures). Beyond: 400 naming where. */
  snapshotDepth: 100,
  /** The rate limit's window; a key idle for longer has its bucket dropped. */
  rateLimitWindowMs: 1000,
  /**
   * `billing-sandbox record`: bytes of one request or answer body kept in the recording (the API's
   * own JSON body limit). A larger body still passes through whole; the entry says it was cut, and
   * `diff` does not replay that request.
   */
  recordBodyBytes: 15 * MB,
  /**
   * `record`: distinct secrets (tokens, credentials, secret fields) it remembers, to give each its
   * number (`***#n`) and to mask it wherever else it appears. Beyond: the oldest is forgotten and
   * gets a new number if seen again.
   */
  recordSecretsKept: 10_000,
  /** `billing-sandbox diff`: the largest recording it reads. Beyond: exit 2 naming the limit. */
  recordingFileBytes: 256 * MB,
  /**
   * Exchanges in one recording. `record` goes on forwarding past it but writes no more (it says so
   * once, and counts them at the end); `diff` refuses a longer recording (exit 2 naming the limit).
   * A replay at 5 requests per second takes about 5.5 hours at the cap.
   */
  recordExchanges: 100_000,
} as const;
