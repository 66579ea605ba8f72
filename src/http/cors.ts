// Owns cross-origin access to the embeddable checkout surface: a browser on the partner's page calls
// /checkout/... with a checkout token, so preflights are answered and answers carry the CORS headers.
// The partner API (server to server, client secrets) gets none of this.
import type { NextFunction, Request, Response } from 'express';

// Sandbox choice (docs/gaps-and-choices.md): `*` rather than echoing the Origin. The checkout token
// travels in Authorization, never in a cookie, so no request is sent with browser credentials and
// any partner page may embed the checkout without being listed anywhere.
export const CHECKOUT_CORS = {
  allowOrigin: '*',
  allowMethods: 'GET, POST',
  allowHeaders: 'Authorization, Content-Type, Idempotency-Key',
  exposeHeaders: 'Retry-After',
  maxAgeSeconds: 600,
} as const;

/**
 * Express middleware, mounted before the body parsers so that even a malformed body's error answer
 * carries the headers (else the browser hides it from the page). `isCheckout` gets `req.path`.
 */
export function checkoutCors(isCheckout: (path: string) => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!isCheckout(req.path)) return next();
    res.setHeader('Access-Control-Allow-Origin', CHECKOUT_CORS.allowOrigin);
    if (req.method === 'OPTIONS' && req.headers.origin && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', CHECKOUT_CORS.allowMethods);
      res.setHeader('Access-Control-Allow-Headers', CHECKOUT_CORS.allowHeaders);
      res.setHeader('Access-Control-Max-Age', String(CHECKOUT_CORS.maxAgeSeconds));
      res.status(204).end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', CHECKOUT_CORS.exposeHeaders);
    next();
  };
}
