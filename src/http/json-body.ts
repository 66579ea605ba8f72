// Owns the fast path of the common request bodies: JSON (`application/json`) and forms
// (`application/x-www-form-urlencoded`: the token endpoint's), with no charset or UTF-8, not
// compressed, their Content-Length within the limit. Read straight from the request and parsed by
// body-parser's rules for json() and urlencoded({ extended: false }) (the same results, failing
// with the same error types), without its stream plumbing (a decoder, an async resource and five
// listeners per body) and without iconv-lite, which body-parser loads, with every encoding it knows,
// at the first body it decodes (some 15 ms of the first token request). Every other body (another
// charset, a compressed or chunked one, one over the limit, YAML) is left to body-parser; a body
// read here skips body-parser's parsers altogether.
import type { Request } from 'express';
import { parse as parseQueryString } from 'qs';
import { exchange } from './exchange.js';

/** `application/json`, optionally with `charset=utf-8` (quoted or not), as a client sends it. */
const PLAIN_JSON = /^application\/json[ \t]*(?:;[ \t]*charset=(?:utf-8|"utf-8")[ \t]*)?$/i;
/** A form, optionally with `charset=utf-8` (quoted or not). */
const PLAIN_FORM = /^application\/x-www-form-urlencoded[ \t]*(?:;[ \t]*charset=(?:utf-8|"utf-8")[ \t]*)?$/i;
const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/;

/** An error the body parsers' error handler reads by its `type` (body-parser's own names). */
function bodyError(message: string, type: string, status = 400): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type });
}

type Parsed = { value: unknown } | { error: Error };

/** The parsed body, or the error body-parser's json() gives the same text. */
function parsedJson(text: string): Parsed {
  if (text.length === 0) return { value: {} };
  const first = text[0] === '{' || text[0] === '[' ? text[0] : FIRST_NON_WHITESPACE.exec(text)?.[1];
  if (first !== '{' && first !== '[') return { error: bodyError(`Unexpected token ${first ?? 'end'} in JSON: not an object or an array`, 'entity.parse.failed') };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: bodyError((error as Error).message, 'entity.parse.failed') };
  }
}

/** body-parser's urlencoded() default: a form of more parameters is refused (413, then 400 here). */
const FORM_PARAMETER_LIMIT = 1000;

/**
 * The parsed form, or the error body-parser's urlencoded({ extended: false }) gives the same text:
 * the same qs parse with the options it passes (depth 0, strict, prototypes allowed, arrays as long
 * as the parameter count), after the same count of parameters. test/json-body.test.ts holds the two
 * to the same answers.
 */
function parsedForm(text: string): Parsed {
  if (text.length === 0) return { value: {} };
  let count = 0;
  let at = -1;
  do {
    count += 1;
    if (count > FORM_PARAMETER_LIMIT) return { error: bodyError('too many parameters', 'parameters.too.many', 413) };
    at = text.indexOf('&', at + 1);
  } while (at !== -1);
  try {
    return { value: parseQueryString(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: 'utf-8', parameterLimit: FORM_PARAMETER_LIMIT, strictDepth: true }) };
  } catch (error) {
    if (error instanceof RangeError) return { error: bodyError('The input exceeded the depth', 'querystring.parse.rangeError') };
    return { error: bodyError((error as Error).message, 'entity.parse.failed') };
  }
}

/** One kind of body the fast path reads: its media types, its size limit and its parser. */
export interface PlainBody {
  type: RegExp;
  /** The text is JSON: kept as received for the journal (ExchangeState.requestText). */
  json: boolean;
  limitBytes: number;
  parse: (text: string) => Parsed;
  /** Requests whose body of this kind is left to body-parser (answered as it answers them). */
  skip?: (req: Request) => boolean;
}

export const plainJson = (limitBytes: number, skip?: (req: Request) => boolean): PlainBody => ({ type: PLAIN_JSON, json: true, limitBytes, parse: parsedJson, skip });
export const plainForm = (limitBytes: number): PlainBody => ({ type: PLAIN_FORM, json: false, limitBytes, parse: parsedForm });

/** Takes the body (true, then `done` once it is read) or leaves it to the next parser (false). */
export type BodyReader = (req: Request, done: (error?: Error) => void) => boolean;

/**
 * Reads the body when it is one of these plain kinds: answers false at once for any other (the
 * caller hands it to body-parser), else true, and calls `done` once the body is in `req.body` (or
 * with the error that body-parser would give).
 */
export function plainBodies(...kinds: PlainBody[]): BodyReader {
  return (req, done) => {
    const { headers } = req;
    const type = headers['content-type'];
    const lengthHeader = headers['content-length'];
    const encoding = headers['content-encoding'];
    if (type === undefined || lengthHeader === undefined || headers['transfer-encoding'] !== undefined) return false;
    let kind: PlainBody | undefined;
    // A loop, not find(): no closure made per request.
    for (const candidate of kinds) {
      if (candidate.type.test(type)) {
        kind = candidate;
        break;
      }
    }
    if (!kind) return false;
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
    const length = Number(lengthHeader);
    if (!Number.isSafeInteger(length) || length > kind.limitBytes || req.complete || kind.skip?.(req)) return false;
    /** The body is all here: parse it and go on (or fail as body-parser would). */
    const parse = (body: Buffer | null, received: number): void => {
      if (received !== length) return done(bodyError('request size did not match content length', 'request.size.invalid'));
      let text = body ? body.toString('utf8') : '';
      // iconv-lite's UTF-8 decoder, which body-parser reads with, drops a leading byte-order mark.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const result = kind.parse(text);
      if ('error' in result) return done(result.error);
      req.body = result.value;
      // An empty body reads as {}: its text (none) is not JSON, so the journal writes the value instead.
      if (kind.json && req.res && text) exchange(req.res).requestText = text;
      done();
    };
    // A small body usually comes in the same read as the headers: node's parser pushes it into the
    // request just after the 'request' event, whose handlers (this one) run first. By the next
    // microtask the body is then in the request's buffer (all Content-Length bytes of it, though
    // the parser may not have marked the message complete yet: the parser delivers no more than
    // that), and is taken in one read(), without turning the stream to flowing mode (four
    // listeners, two turns of the event loop and the stream's bookkeeping). A body still on its
    // way is read as it comes.
    queueMicrotask(() => {
      if (req.readableFlowing === null && req.readableLength === length) {
        parse(length ? (req.read() as Buffer) : null, length);
      } else {
        readAsItComes(req, parse, done);
      }
    });
    return true;
  };
}

/** Read a body chunk by chunk as it arrives, then `parse` it; `done` with the error of a request aborted or failed. */
function readAsItComes(req: Request, parse: (body: Buffer | null, received: number) => void, done: (error?: Error) => void): void {
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
    parse(chunks.length === 1 ? chunks[0] : chunks.length ? Buffer.concat(chunks, received) : null, received);
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
}
