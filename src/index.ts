// Owns the public, programmatic API: startSandbox() for test runners (src/sandbox.ts), connect() and
// the typed test client (src/client/), the createApp/createDeps factories, a webhook receiver for
// tests, and the seeded faker factories. The command line imports src/sandbox.ts instead, so a start
// does not load faker (large) or the receiver.
export * from './sandbox.js';
// Named, not `export *`: the CommonJS bundle then lists them with its own exports (scripts/bundle-cjs.mjs),
// where a re-export of another bundle's (client.cjs) is copied in late and some loaders (Vitest's) miss it.
export { connect, DEFAULT_KEYS, DurationError, ENVIRONMENT_PREFIX, openConnection, parseDuration, readErrorBody, tokenRequest } from './client/index.js';
export type {
  AdvancedClock, ClientCredentials, ClockView, ConnectionSettings, ConnectOptions, DeliveryList, EventPage, Health, HttpMethod, LoadedScenario,
  PartnerOptions, PathsOf, RequestJournal, RestoredSnapshot, SandboxApi, SandboxConnection, SandboxControl, SandboxPartner, SavedSnapshot, ScenarioList, SimulatedPayment, SnapshotList,
  Topic, TypedClient, TypedMethod, WebhookBody,
} from './client/index.js';
export { createApp, createDeps, FEATURES } from './app.js';
export type { DepsOverrides, SandboxApp } from './app.js';
export type { DefaultCredentials, Environment, SandboxConfig } from './config.js';
export type { Deps } from './deps.js';
export { startWebhookReceiver } from './testing/webhook-receiver.js';
export type { CountOptions, KeyCount, PendingWebhook, ReceivedWebhook, ReceiverOptions, Responder, WaitOptions, WebhookReceiver } from './testing/webhook-receiver.js';
/** The seeded faker factories behind --fixtures: realistic create inputs for every resource. */
export * as factories from './fixtures/factories.js';
