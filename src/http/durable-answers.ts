// Owns the acknowledgement rule of --data: the answer to a request that may write (any method but
// GET, HEAD and OPTIONS) is sent only once every change made before it is in the data file, so an
// acknowledged write survives kill -9 (the loss window after an acknowledgement is zero). Concurrent
// writes share one file write (group commit); reads never wait. When the write fails, the change is
// rolled back (Store.fail) and the answer becomes 503 storage_unavailable with Retry-After: a retry
// then makes the change once, never twice. Without --data it does nothing.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { ApiError } from '../errors.js';
import { storageError } from '../store/store.js';

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
          log.warn({ err: error, method: req.method, path: req.path }, 'the data file could not be written; the change was rolled back and is not acknowledged');
          if (res.headersSent) return void res.destroy();
          const refused = error instanceof ApiError ? error : storageError();
          for (const name of ['content-length', 'content-type', 'content-disposition', 'etag', 'location']) res.removeHeader(name);
          res.statusCode = refused.status;
          for (const [name, value] of Object.entries(refused.headers)) res.setHeader(name, value);
          res.setHeader('Content-Type', 'application/json; charset=utf-8');
          end(JSON.stringify(refused.body));
        },
      );
      return res;
    }) as Response['end'];
    next();
  };
}
