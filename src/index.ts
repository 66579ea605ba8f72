// Owns the public, programmatic API: startSandbox() for test runners (src/sandbox.ts), the
// createApp/createDeps factories, a webhook receiver for tests, and the seeded faker factories. The
// command line imports src/sandbox.ts instead, so a start does not load faker (large) or the receiver.
export * from './sandbox.js';
export { createApp, createDeps, FEATURES } from './app.js';
export type { DepsOverrides, SandboxApp } from './app.js';
export type { DefaultCredentials, Environment, SandboxConfig } from './config.js';
export type { Deps } from './deps.js';
export { startWebhookReceiver } from './testing/webhook-receiver.js';
export type { CountOptions, KeyCount, ReceivedWebhook, ReceiverOptions, Responder, WaitOptions, WebhookReceiver } from './testing/webhook-receiver.js';
/** The seeded faker factories behind --fixtures: realistic create inputs for every resource. */
export * as factories from './fixtures/factories.js';
