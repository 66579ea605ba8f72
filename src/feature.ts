// Owns the shape of a feature: the operations it answers, the control-plane operations it adds,
// interceptors that may answer first, its installation (due-job kinds, listeners, extra routes), and
// the pages it offers a person (linked from the landing page).
import type { Express } from 'express';
import type { Deps } from './deps.js';
import type { ApiHandlers, ControlHandlers } from './http/context.js';
import type { Interceptor } from './http/router.js';

export interface Feature {
  name: string;
  /** Partner API operations by operationId. */
  handlers?: ApiHandlers;
  /** Control-plane operations by operationId. */
  control?: ControlHandlers;
  /** Run before every API handler, in feature order; the first reply wins. */
  interceptors?: Interceptor[];
  /** Register due-job kinds and event listeners; runs once per app, before routes exist. */
  install?(deps: Deps): void;
  /** Express routes outside the two OpenAPI documents (hosted pages, signed files). */
  routes?(app: Express, deps: Deps): void;
  /** Pages a person can open, linked from the landing page at / (the web inspector at /_sandbox/ui is one). */
  pages?: PageLink[];
}

export interface PageLink {
  path: string;
  title: string;
  description: string;
}
