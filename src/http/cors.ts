// Owns cross-origin access to the embeddable checkout surface: a browser on the partner's page calls
// /checkout/... with a checkout token, so preflights are answered and answers carry the CORS headers.
// The partner API (server to server, client secrets) gets none of this. The headers are the `cors`
// package's (express's own CORS middleware); this file only says where it applies and with what.
import type { NextFunction, Request, Response } from 'express';
import cors from 'cors';

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

const checkoutCorsHandler = cors({
  origin: CHECKOUT_CORS.allowOrigin,
  methods: CHECKOUT_CORS.allowMethods,
  allowedHeaders: CHECKOUT_CORS.allowHeaders,
  exposedHeaders: CHECKOUT_CORS.exposeHeaders,
  maxAge: CHECKOUT_CORS.maxAgeSeconds,
  // A preflight (any OPTIONS on the checkout surface) is answered here, 204 with no body; it never
  // reaches the API router, so nothing is recorded.
  preflightContinue: false,
  optionsSuccessStatus: 204,
});

/**
 * Express middleware, mounted before the body parsers so that even a malformed body's error answer
 * carries the headers (else the browser hides it from the page). `isCheckout` gets `req.path`.
 */
export function checkoutCors(isCheckout: (path: string) => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!isCheckout(req.path)) return next();
    checkoutCorsHandler(req, res, next);
  };
}
