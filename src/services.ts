// Owns the registry of services that features add at install time (webhook delivery, the live
// stream, the journal, scenarios, ...) and the hooks tests set (delivery faults, PDF fetch options,
// a scenario clock). Each name has one type, so a reader gets the service's own type, not `unknown`.
import type { StartFixtures } from './fixtures/document.js';
import type { Journal } from './journal/journal.js';
import type { FetchOptions } from './pdf/fetch.js';
import type { ScenarioEngine } from './scenarios/engine.js';
import type { Sleep } from './scenarios/intercept.js';
import type { StreamHub } from './stream/hub.js';
import type { DeliveryDrillsHook, DeliveryDuplicatesHook, DeliveryFaultHook } from './faults.js';
import type { WebhookQueue } from './webhooks/queue.js';
import type { MemoryBudget } from './budget/memory-budget.js';
import type { SendGuard } from './http/send-guard.js';
import type { BodyBudget } from './http/body-budget.js';
import type { SnapshotTable } from './snapshots/table.js';

/** Every service by its name (the names are exported next to their owners: WEBHOOKS_SERVICE, JOURNAL, ...). */
export interface Services {
  webhooks: WebhookQueue;
  stream: StreamHub;
  journal: Journal;
  /** The process-wide budget of the journal and the webhook history (src/budget/memory-budget.ts). */
  memoryBudget: MemoryBudget;
  scenarioEngine: ScenarioEngine;
  /** Tests only: how a scenario's delay waits. */
  scenarioSleep: Sleep;
  /** Faults injected into webhook delivery attempts (the scenario engine's; tests may set their own). */
  deliveryFaults: DeliveryFaultHook;
  /** Copies of a delivered event to send (scenario `duplicate_delivery` rules); tests may set their own. */
  deliveryDuplicates: DeliveryDuplicatesHook;
  /** Evolution drills that reshape a delivery body (scenario topic rules with unknown_fields, ...). */
  deliveryDrills: DeliveryDrillsHook;
  /** Tests only: an extra CA, a resolver, a time-out for fetching PDFs. */
  'pdf.fetchOptions': Partial<FetchOptions>;
  /** The bound on unread answers of the server made for these deps (createSandboxServer). */
  sendGuard: SendGuard;
  /** The bound on request bodies being received at once, of the server made for these deps. */
  bodyBudget: BodyBudget;
  /** Every partner's account snapshots (src/snapshots/). */
  snapshots: SnapshotTable;
  /** The --fixtures document (a dataset or a snapshot), loaded again after a full reset. */
  startFixtures: StartFixtures;
}

export type ServiceName = keyof Services;

/** A map from each service name to a value of that name's type: set checks the value, get returns it typed. */
export class ServiceRegistry {
  private readonly entries = new Map<ServiceName, Services[ServiceName]>();

  get<K extends ServiceName>(name: K): Services[K] | undefined {
    // set is the only writer and takes a Services[K] for name K, so the entry under K has that type.
    return this.entries.get(name) as Services[K] | undefined;
  }

  /** A service a feature installs when the app is created: missing means that feature never ran, a bug. */
  installed<K extends ServiceName>(name: K): Services[K] {
    const service = this.get(name);
    if (service === undefined) throw new Error(`The ${name} service is not installed (its feature's install did not run).`);
    return service;
  }

  set<K extends ServiceName>(name: K, service: Services[K]): this {
    this.entries.set(name, service);
    return this;
  }

  delete(name: ServiceName): boolean {
    return this.entries.delete(name);
  }

  /** Close every service that can be closed (the webhook queue, the stream hub), in the order they were added. */
  closeAll(): void {
    for (const service of this.entries.values()) {
      if (closable(service)) service.close();
    }
  }
}

/** A service with a close method (closing is synchronous: it aborts and ends, it does not wait). */
function closable(service: unknown): service is { close(): void } {
  return typeof service === 'object' && service !== null && 'close' in service && typeof service.close === 'function';
}
