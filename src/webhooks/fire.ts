// Owns POST /_sandbox/events: a registry of builders, one per topic, that fire the event as the real
// operation would: from the named object's current state, else the account's most recent object of
// that kind, else realistic related objects made through the domain functions.
import { Faker, en } from '@faker-js/faker';
import type { Deps } from '../deps.js';
import { eventLog, type EventRecord, type Topic } from '../events/events.js';
import { ApiError, Errors } from '../http/errors.js';
import type { Account } from '../store/store.js';
import { createCustomer, customerEventData, customers, getCustomer, type Customer } from '../domain/customers/customers.js';

export interface Fired {
  entity_id: string;
  data: Record<string, unknown>;
}

/** Answers what to record, or the event a domain function already recorded while making the object. */
export type EventBuilder = (deps: Deps, account: Account, entityId: string | undefined) => Fired | EventRecord;

/** Faker seeded from the account's generator, so the same seed makes the same objects. */
export function fakerFor(account: Account): Faker {
  const faker = new Faker({ locale: [en] });
  faker.seed(account.random.int(0, 2 ** 31 - 1));
  return faker;
}

function newest<T>(items: IterableIterator<T>): T | undefined {
  return items.next().value ?? undefined;
}

/** The event of `topic` most recently recorded for `entityId` (made by a domain function just now). */
function recordedFor(account: Account, topic: Topic, entityId: string): EventRecord | undefined {
  for (const event of eventLog(account).newest({ field: 'topic', value: topic })) {
    if (event.entity_id === entityId) return event;
    return undefined;
  }
  return undefined;
}

export function fakeCustomer(deps: Deps, account: Account): Customer {
  const faker = fakerFor(account);
  const name = faker.company.name();
  return createCustomer(deps, account, {
    name,
    legal_name: `${name} ${faker.helpers.arrayElement(['LLC', 'Inc.', 'Corp.'])}`,
    email: faker.internet.email({ provider: 'example.com' }).toLowerCase(),
    street_address: faker.location.streetAddress(),
    city: faker.location.city(),
    state: faker.location.state({ abbreviated: true }),
    postal_code: faker.location.zipCode('#####'),
    country: 'US',
  });
}

/** The named customer, the most recent one, or a new one (whose own customer_created is recorded). */
function customerFor(deps: Deps, account: Account, entityId: string | undefined): { customer: Customer; made: boolean } {
  if (entityId) return { customer: getCustomer(account, entityId), made: false };
  const latest = newest(customers(account).newest());
  return latest ? { customer: latest, made: false } : { customer: fakeCustomer(deps, account), made: true };
}

export const builders: Partial<Record<Topic, EventBuilder>> = {
  customer_created(deps, account, entityId) {
    const { customer, made } = customerFor(deps, account, entityId);
    if (made) return recordedFor(account, 'customer_created', customer.id) ?? { entity_id: customer.id, data: customerEventData(customer) };
    return { entity_id: customer.id, data: customerEventData(customer) };
  },
  customer_updated(deps, account, entityId) {
    const { customer } = customerFor(deps, account, entityId);
    // Nothing changed: the event re-states the customer as it is now.
    return { entity_id: customer.id, data: { ...customerEventData(customer), changed_fields: [] } };
  },
  customer_archived(deps, account, entityId) {
    const { customer } = customerFor(deps, account, entityId);
    return { entity_id: customer.id, data: customerEventData(customer) };
  },
};

/** Fire `topic`; 501 naming the topic when no builder exists for it yet. */
export function fireEvent(deps: Deps, account: Account, topic: Topic, entityId: string | undefined): EventRecord {
  const build = builders[topic];
  if (!build) throw new ApiError(Errors.notImplemented, { message: `Firing ${topic} is not implemented by the sandbox yet.` });
  const built = build(deps, account, entityId);
  if ('idempotency_key' in built) return built;
  return deps.events.record(account, topic, built.entity_id, built.data);
}

/** The event as its deliveries carry it. */
export function eventView(event: EventRecord) {
  return { entity_id: event.entity_id, idempotency_key: event.idempotency_key, timestamp: event.timestamp, topic: event.topic, data: event.data };
}
