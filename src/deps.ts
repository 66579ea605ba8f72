// Owns the dependency bag that createApp wires once and every handler receives: config, store,
// clock scheduler, events, partners and tokens. Nothing hidden is global.
import type { SandboxConfig } from './config.js';
import type { RealNow } from './clock/clock.js';
import type { Scheduler } from './clock/scheduler.js';
import type { Events } from './events/events.js';
import type { Partners } from './auth/partners.js';
import type { TokenSigner } from './auth/tokens.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { Logger } from './log.js';
import type { Store } from './store/store.js';
import type { ServiceRegistry } from './services.js';
import type { BlobStore } from './store/blobs.js';
import type { Activity } from './stream/activity.js';

export interface Deps {
  config: SandboxConfig;
  store: Store;
  blobs: BlobStore;
  scheduler: Scheduler;
  events: Events;
  /** Delivery attempts, journaled requests and clock advances, for the live stream. */
  activity: Activity;
  partners: Partners;
  tokens: TokenSigner;
  rateLimiter: RateLimiter;
  log: Logger;
  realNow: RealNow;
  /** Services that features add at install time (webhook delivery, scenarios, ...), by name. */
  services: ServiceRegistry;
}
