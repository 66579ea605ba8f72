// Owns the acknowledgement rule of --data: the answer to a request that may write (any method but
// GET, HEAD and OPTIONS) is sent only once every change made before it is in the data file, so an
// acknowledged write survives kill -9 (the loss window after an acknowledgement is zero). Concurrent
// writes share one file write (group commit); reads never wait. Without --data it does nothing.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { ApiError, Errors } from '../errors.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function durableAnswers(store: Store, log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!store.persistent || READS.has(req.method)) return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    // Every way express answers (json, send, redirect, sendStatus) ends in res.end: hold it there.
    res.end = ((...args: unknown[]) => {
      res.end = end as Response['end'];
      if (!store.pending) return end(...args);
      store.durable().then(
        () => end(...args),
        (error: unknown) => {
          log.error({ err: error, method: req.method, path: req.path }, 'the data file could not be written; the answer is withheld');
          if (res.headersSent) return void res.destroy();
          // Not acknowledged: the change stays in memory and the next write retries it.
          const body = new ApiError(Errors.internal, {
            message: 'The change could not be written to the data file, so it is not acknowledged (it may still be written later). Retry with back-off.',
          }).body;
          for (const name of ['content-length', 'content-type', 'content-disposition', 'etag', 'location']) res.removeHeader(name);
          res.statusCode = 500;
          res.setHeader('Content-Type', 'application/json; charset=utf-8');
          end(JSON.stringify(body));
        },
      );
      return res;
    }) as Response['end'];
    next();
  };
}
