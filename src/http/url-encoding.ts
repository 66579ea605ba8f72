// Owns the check that a request URL's percent-encoding is well formed, before anything routes or
// decodes it: one place for every path family (API, checkout, hosted pages, control plane, files),
// so no decode deeper down can throw and answer 500.
import type { NextFunction, Request, Response } from 'express';
import type { Deps } from '../deps.js';
import { ApiError, Errors } from '../errors.js';
import { errorReply, send } from './router.js';

const WHY = "has malformed percent-encoding: every '%' must start a %XX escape, and the escaped bytes must be UTF-8";

/** True when decodeURIComponent accepts the text: every escape is %XX and the bytes are valid UTF-8. */
function decodes(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** Express middleware: a 400 naming `path` or `query` for a URL no decoder can read; nothing runs. */
export function wellFormedUrl(deps: Deps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const query = mark < 0 ? '' : url.slice(mark + 1);
    const field = !decodes(path) ? 'path' : !decodes(query) ? 'query' : undefined;
    if (!field) return next();
    send(res, errorReply(new ApiError(Errors.malformedUrl, { validation_errors: { [field]: WHY } }), deps, req));
  };
}
