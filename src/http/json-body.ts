// Owns the fast path of the common request body: JSON (`application/json`, with no charset or
// UTF-8), not compressed, its Content-Length within the limit. Read straight from the request and
// parsed by body-parser's rules for json() (empty: {}; strict: an object or an array at the top; a
// leading byte-order mark dropped), failing with the same error types, without its stream plumbing (a
// decoder, an async resource and five listeners per body). Every other body (another charset, a
// compressed or chunked one, one over the limit, a form, YAML) is left to body-parser; a body read
// here skips body-parser's parsers altogether.
import type { Request } from 'express';

/** `application/json`, optionally with `charset=utf-8` (quoted or not), as a client sends it. */
const PLAIN_JSON = /^application\/json[ \t]*(?:;[ \t]*charset=(?:utf-8|"utf-8")[ \t]*)?$/i;
const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/;

/** An error the body parsers' error handler reads by its `type` (body-parser's own names). */
function bodyError(message: string, type: 'entity.parse.failed' | 'request.size.invalid' | 'request.aborted'): Error {
  return Object.assign(new Error(message), { status: 400, statusCode: 400, expose: true, type });
}

/** The parsed body, or the error body-parser's json() gives the same text. */
function parsed(text: string): { value: unknown } | { error: Error } {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return { value: {} };
  const first = text[0] === '{' || text[0] === '[' ? text[0] : FIRST_NON_WHITESPACE.exec(text)?.[1];
  if (first !== '{' && first !== '[') return { error: bodyError(`Unexpected token ${first ?? 'end'} in JSON: not an object or an array`, 'entity.parse.failed') };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: bodyError((error as Error).message, 'entity.parse.failed') };
  }
}

/** Takes the body (true, then `done` once it is read) or leaves it to the next parser (false). */
export type BodyReader = (req: Request, done: (error?: Error) => void) => boolean;

/**
 * Reads the body when it is plain JSON: answers false at once for any other (the caller hands it to
 * body-parser), else true, and calls `done` once the body is in `req.body` (or with the error that
 * body-parser would give).
 */
export function plainJsonBody(limitBytes: number, skip: (req: Request) => boolean): BodyReader {
  return (req, done) => {
    const { headers } = req;
    const type = headers['content-type'];
    const lengthHeader = headers['content-length'];
    const encoding = headers['content-encoding'];
    if (type === undefined || lengthHeader === undefined || headers['transfer-encoding'] !== undefined || !PLAIN_JSON.test(type)) return false;
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
    const length = Number(lengthHeader);
    if (!Number.isSafeInteger(length) || length > limitBytes || req.complete || skip(req)) return false;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    // Once: an aborted request may also end or fail after its 'aborted'.
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error) return done(error);
      if (received !== length) return done(bodyError('request size did not match content length', 'request.size.invalid'));
      const result = parsed(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
      if ('error' in result) return done(result.error);
      req.body = result.value;
      done();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onAborted = () => finish(bodyError('request aborted', 'request.aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    return true;
  };
}
