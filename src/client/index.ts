// Owns the test client's public surface, the light entry the package's other entries share (bundled
// once as dist/cjs/client.cjs, so `billing-sandbox`, `billing-sandbox/client` and
// `billing-sandbox/testcontainers` hold one SandboxRequestError class): connect(), the typed `api`
// and `control`, durations, and the webhook body types. It loads no server code.
export { connect, openConnection, DEFAULT_KEYS } from './connect.js';
export type { ConnectOptions, ConnectionSettings, PartnerOptions, SandboxApi, SandboxConnection, SandboxPartner } from './connect.js';
export type {
  AdvancedClock, ClockView, DeliveryList, EventPage, Health, LoadedScenario, RequestJournal, RestoredSnapshot, SandboxControl, SavedSnapshot, ScenarioList, SimulatedPayment, SnapshotList,
} from './control.js';
export { SandboxRequestError, readErrorBody } from './errors.js';
export type { SandboxErrorBody } from './errors.js';
export { DurationError, parseDuration } from './duration.js';
export { ENVIRONMENT_PREFIX, tokenRequest } from './tokens.js';
export type { ClientCredentials, Environment } from './tokens.js';
export type { HttpMethod, PathsOf, TypedClient, TypedMethod } from './typed.js';
export type { Topic, WebhookBody } from './webhook-types.js';
