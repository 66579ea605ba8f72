// Owns the typed control plane of the test client: every /_sandbox path typed from
// openapi/control-plane.yaml (GET, POST, DELETE), and named helpers for what tests do most (the
// clock, firing events, scenarios, reset, events, webhook deliveries, the request journal), each
// acting on the account of the client's API key.
import type { components, operations, paths as ControlPaths } from '../generated/control-plane.js';
import type { ScenarioDocument } from '../scenarios/document.js';
import { parseDuration } from './duration.js';
import { typedClient, type TypedClient, type TypedClientOptions } from './typed.js';
import type { Topic, WebhookBody } from './webhook-types.js';

/** What POST /_sandbox/events answers: the fired event (its body as a receiver gets it) and what the firing made. */
export type Fired<T extends Topic> = WebhookBody<T> & { made: components['schemas']['FiredEvent']['made'] };

type Query<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;
type Json<Operation extends keyof operations, Status extends number = 200> =
  operations[Operation]['responses'] extends Record<Status, { content: { 'application/json': infer Body } }> ? Body : never;

export type ClockView = Json<'sandboxGetClock'>;
export type AdvancedClock = Json<'sandboxAdvanceClock'>;
export type EventPage = Json<'sandboxListEvents'>;
export type DeliveryList = Json<'sandboxListDeliveries'>;
export type RequestJournal = Json<'sandboxListRequests'>;
export type ScenarioList = Json<'sandboxListScenarios'>;
export type LoadedScenario = Json<'sandboxLoadScenario', 201>;
export type Health = Json<'sandboxHealth'>;
export type SimulatedPayment = Json<'sandboxPayInvoice'>;
export type SavedSnapshot = Json<'sandboxSaveSnapshot', 201>;
export type RestoredSnapshot = Json<'sandboxRestoreSnapshot'>;
export type SnapshotList = Json<'sandboxListSnapshots'>;

export interface SandboxControl extends TypedClient<ControlPaths> {
  /** GET /_sandbox/health. */
  health(): Promise<Health>;
  /** POST /_sandbox/reset with this account's token: its data, clock, subscriptions, journal and scenarios back to empty (its keys stay). */
  reset(): Promise<void>;
  clock: {
    /** GET /_sandbox/clock: the account clock's now and its lead over real time. */
    now(): Promise<ClockView>;
    /**
     * POST /_sandbox/clock/advance: move the account clock forward by `90s`, `15m`, `2h`, `31d`,
     * `1d12h` or a number of seconds, running what falls due (webhook retries, settlements, expiries).
     */
    advance(by: string | number): Promise<AdvancedClock>;
    /** POST /_sandbox/clock/advance `{ to }`: move the clock to an RFC 3339 instant (never backwards). */
    advanceTo(time: string | Date): Promise<AdvancedClock>;
  };
  /**
   * POST /_sandbox/events: fire `topic` as the real operation would (it joins the account's ordered
   * delivery queue). Without `entityId`, the account's most recent object of the topic's kind, or new
   * realistic ones; `duplicate: N` sends it N more times once delivered (a receiver's deduplication
   * drill). Resolves to the event as deliveries carry it.
   */
  /** Fire a topic as the real operation would: the event's body, typed per topic, and the objects the firing `made`. */
  trigger<T extends Topic>(topic: T, options?: { entityId?: string; duplicate?: number }): Promise<Fired<T>>;
  scenarios: {
    /** POST /_sandbox/scenarios: a scenario document (an object, or JSON/YAML text); resolves to its summary with `id`. */
    load(document: ScenarioDocument | string): Promise<LoadedScenario>;
    /** GET /_sandbox/scenarios: the --scenario documents and this account's, with their counters. */
    list(): Promise<ScenarioList['data']>;
    /** DELETE /_sandbox/scenarios/{id}. */
    remove(id: string): Promise<void>;
    /** DELETE /_sandbox/scenarios: every scenario loaded for this account; resolves to how many. */
    clear(): Promise<number>;
  };
  events: {
    /** GET /_sandbox/events: the account's events, newest first (filter by `topic`, `entity_id`). */
    list(query?: Query<'sandboxListEvents'>): Promise<EventPage>;
  };
  webhooks: {
    /** GET /_sandbox/webhooks/deliveries: every delivery attempt, newest first, with the receiver's status or the error. */
    deliveries(query?: Query<'sandboxListDeliveries'>): Promise<DeliveryList['data']>;
    /** POST /_sandbox/webhooks/retry: send every pending delivery now. */
    retry(): Promise<void>;
  };
  /** GET /_sandbox/requests: the API requests the account received, newest first (filter by `method`, `path`, `status`). */
  journal(query?: Query<'sandboxListRequests'>): Promise<RequestJournal['data']>;
  snapshots: {
    /** POST /_sandbox/snapshots: this account kept as a snapshot of its partner under `name` (replacing one of that name). */
    save(name: string): Promise<SavedSnapshot>;
    /** POST /_sandbox/snapshots/{name}/restore: this account put back as saved (before each test, say). */
    restore(name: string): Promise<RestoredSnapshot>;
    /** GET /_sandbox/snapshots: the partner's snapshots. */
    list(): Promise<SnapshotList['data']>;
    /** DELETE /_sandbox/snapshots/{name}. */
    remove(name: string): Promise<void>;
  };
  tokens: {
    /** POST /_sandbox/tokens/expire: every access token of the account issued so far answers 401 from now on (the client renews its own). */
    expire(): Promise<void>;
  };
  invoices: {
    /** POST /_sandbox/invoices/{id}/pay: pay the invoice as its customer would (payment_succeeded, then invoice_paid). */
    pay(id: string, input?: NonNullable<operations['sandboxPayInvoice']['requestBody']>['content']['application/json']): Promise<SimulatedPayment>;
  };
}

/** The control plane on the sandbox at `origin`, acting on the account `options.auth` names. */
export function controlClient(origin: string, options: Omit<TypedClientOptions, 'baseUrl'> & { tokensExpired?: () => void }): SandboxControl {
  const client = typedClient<ControlPaths>({ ...options, baseUrl: origin });
  const advance = (body: { seconds: number } | { to: string }) => client.POST('/_sandbox/clock/advance', { body });
  return {
    ...client,
    health: () => client.GET('/_sandbox/health'),
    reset: async () => {
      await client.POST('/_sandbox/reset');
    },
    clock: {
      now: () => client.GET('/_sandbox/clock'),
      advance: (by) => advance({ seconds: parseDuration(by) }),
      advanceTo: (time) => advance({ to: time instanceof Date ? time.toISOString() : time }),
    },
    trigger: async <T extends Topic>(topic: T, { entityId, duplicate }: { entityId?: string; duplicate?: number } = {}) =>
      (await client.POST('/_sandbox/events', {
        body: { topic, ...(entityId === undefined ? {} : { entity_id: entityId }), ...(duplicate === undefined ? {} : { duplicate }) },
      })) as unknown as Fired<T>,
    scenarios: {
      load: (document) => client.POST('/_sandbox/scenarios', typeof document === 'string'
        // Text goes as written, JSON or YAML: the sandbox reads either (and names the line of a YAML error).
        ? { body: document as never, bodySerializer: String, headers: { 'Content-Type': /^\s*[{[]/.test(document) ? 'application/json' : 'application/yaml' } }
        // The hand-written ScenarioDocument type is the schema's (scenario.schema.json); the generated one is looser.
        : { body: document as never }),
      list: async () => (await client.GET('/_sandbox/scenarios')).data,
      remove: async (id) => {
        await client.DELETE('/_sandbox/scenarios/{id}', { params: { path: { id } } });
      },
      clear: async () => (await client.DELETE('/_sandbox/scenarios')).deleted,
    },
    events: {
      list: (query) => client.GET('/_sandbox/events', { params: { query } }),
    },
    webhooks: {
      deliveries: async (query) => (await client.GET('/_sandbox/webhooks/deliveries', { params: { query } })).data,
      retry: async () => {
        await client.POST('/_sandbox/webhooks/retry');
      },
    },
    journal: async (query) => (await client.GET('/_sandbox/requests', { params: { query } })).data,
    snapshots: {
      save: (name) => client.POST('/_sandbox/snapshots', { body: { name, replace: true } }),
      restore: (name) => client.POST('/_sandbox/snapshots/{name}/restore', { params: { path: { name } } }),
      list: async () => (await client.GET('/_sandbox/snapshots')).data,
      remove: async (name) => {
        await client.DELETE('/_sandbox/snapshots/{name}', { params: { path: { name } } });
      },
    },
    tokens: {
      expire: async () => {
        await client.POST('/_sandbox/tokens/expire');
        // The client's own token is one of them: the next token() or call gets a new one at once.
        options.tokensExpired?.();
      },
    },
    invoices: {
      pay: (id, input) => client.POST('/_sandbox/invoices/{id}/pay', { params: { path: { id } }, ...(input ? { body: input } : {}) }),
    },
  };
}
