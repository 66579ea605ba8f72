// Owns canonical JSON: one spelling per value (object keys sorted, JSON's own rules otherwise), for
// whatever is hashed to compare or name requests and documents (idempotency fingerprints, a
// scenario document's content hash). safe-stable-stringify rather than our own: it is the
// well-kept, fast implementation pino already brings, and it handles the edge cases (undefined
// members, toJSON, circular values) the same way everywhere.
import { configure } from 'safe-stable-stringify';

/** JSON text with object keys sorted at every depth, so equal values always read the same. */
export const canonicalJson: (value: unknown) => string | undefined = configure({ deterministic: true, circularValue: TypeError });
