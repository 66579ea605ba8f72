// Owns the answer to requests Node's HTTP parser refuses before express sees them (headers over the
// limit, a malformed request line, a request that took too long to arrive): the same HttpError JSON
// as every other refusal, written straight to the socket, which is then closed.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { http } from '../node-http.js';
import { ApiError, Errors, type ErrorTemplate } from '../errors.js';
import type { Logger } from '../log.js';
import { LIMITS } from '../limits.js';

/** Node's parser error codes, by what they mean for the client. */
function refusalFor(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(Errors.headersTooLarge, { validation_errors: { headers: `are larger than the server accepts (${LIMITS.headerBytes / 1024} KB in all)` } });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(Errors.payloadTooLarge, { message: 'The chunk extensions are larger than the server accepts.' });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(Errors.requestTimeout);
    default:
      return new ApiError(Errors.malformedRequest);
  }
}

/** The whole response as bytes: status line, JSON headers, `Connection: close`, the HttpError body. */
function responseBytes(error: ApiError): string {
  const body = JSON.stringify(error.body);
  const template: ErrorTemplate = error.template;
  return `HTTP/1.1 ${template.status} ${http.STATUS_CODES[template.status] ?? 'Error'}\r\n`
    + 'Content-Type: application/json; charset=utf-8\r\n'
    + `Content-Length: ${Buffer.byteLength(body)}\r\n`
    + 'Connection: close\r\n\r\n'
    + body;
}

/**
 * Install on a server: refusals answer the HttpError body, then the socket closes. A client that
 * already hung up (ECONNRESET) or a socket that cannot be written gets nothing and is destroyed.
 */
export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    log.debug({ code: error.code }, 'request refused by the HTTP parser');
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(responseBytes(refusalFor(error.code)));
  });
}
