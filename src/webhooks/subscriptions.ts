// Owns webhook subscriptions: one topic each, HTTPS endpoints (plain http only with
// --allow-http-webhooks), the stored secret (never shown: secret_last_4_digits instead), soft deletion,
// and their bounds: at most LIMITS.webhookSubscriptionsPerAccount active, the most recent
// LIMITS.webhookDeletedSubscriptionsKept deleted ones still listed.
import type { Deps } from '../deps.js';
import type { Topic } from '../events/events.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { defineCollection, type Account } from '../store/store.js';
import { LIMITS } from '../limits.js';
import { howToSet } from '../settings.js';

export interface Subscription {
  id: string;
  endpoint_url: string;
  topic: Topic;
  is_active: boolean;
  partner_id: string;
  /** Stored so deliveries can carry it; never leaves the sandbox except in the receiver's Authorization header. */
  secret_key: string | null;
  created_at: string;
  updated_at: string;
  /** Set on a CLI forwarder's subscription: the id of the stream it lives with (see src/stream/forwarders.ts). */
  forwarder?: string;
}

// Indexed by is_active too: counting the active ones (every POST /webhooks) and finding the deleted
// ones walks those alone, never every subscription the account ever had.
export const subscriptions = defineCollection<Subscription>('webhook_subscriptions', ['topic', 'is_active']);

export const MAX_URL_LENGTH = LIMITS.webhookUrlChars;

/** Visible ASCII only, as an HTTP header value of a bearer token can carry. */
const SECRET_FORM = /^[\x21-\x7e]{1,256}$/;

export interface SubscriptionInput {
  endpoint_url: string;
  topic: Topic;
  secret_key?: string;
}

/** The subscription as the API shows it: the secret replaced by its last four characters. */
export function subscriptionView(sub: Subscription) {
  return {
    id: sub.id,
    endpoint_url: sub.endpoint_url,
    topic: sub.topic,
    is_active: sub.is_active,
    partner_id: sub.partner_id,
    secret_last_4_digits: sub.secret_key ? sub.secret_key.slice(-4) : null,
    created_at: sub.created_at,
    updated_at: sub.updated_at,
  };
}

export function checkEndpointUrl(deps: Deps, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidFields({ endpoint_url: 'must be an absolute URL' });
  }
  if (raw.length > MAX_URL_LENGTH) throw invalidFields({ endpoint_url: `must be at most ${MAX_URL_LENGTH} characters` });
  const allowHttp = deps.config.allowHttpWebhooks;
  if (url.protocol === 'http:' && !allowHttp) {
    throw invalidFields(
      { endpoint_url: 'must be an HTTPS URL' },
      `endpoint_url must be an HTTPS URL. Plain http endpoints are accepted only when the sandbox runs with ${howToSet('allowHttpWebhooks', true)}.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidFields({ endpoint_url: allowHttp ? 'must be an https or http URL' : 'must be an HTTPS URL' });
  }
  if (!url.hostname) throw invalidFields({ endpoint_url: 'must name a host' });
  return raw;
}

const ACTIVE = { field: 'is_active', value: 'true' };
const DELETED = { field: 'is_active', value: 'false' };

/** Active subscriptions of the account (a CLI forwarder's included): a walk of the active ones only. */
function activeCount(account: Account): number {
  let count = 0;
  for (const sub of subscriptions(account).newest(ACTIVE)) if (sub.is_active) count += 1;
  return count;
}

export function createSubscription(deps: Deps, account: Account, input: SubscriptionInput): Subscription {
  const endpointUrl = checkEndpointUrl(deps, input.endpoint_url);
  // The secret travels in an HTTP header: a character a header cannot carry would fail every attempt.
  if (input.secret_key !== undefined && !SECRET_FORM.test(input.secret_key)) {
    throw invalidFields({ secret_key: 'must be 1 to 256 visible ASCII characters (no spaces or control characters): it is sent in the Authorization header' });
  }
  const cap = LIMITS.webhookSubscriptionsPerAccount;
  if (activeCount(account) >= cap) {
    throw new ApiError(Errors.limitReached, {
      message: `The account has ${cap} active webhook subscriptions, the most it may have; delete one (DELETE /webhooks/{subscription_id}) before adding another.`,
    });
  }
  const now = account.clock.iso();
  return subscriptions(account).insert({
    id: account.newId('whs'),
    endpoint_url: endpointUrl,
    topic: input.topic,
    is_active: true,
    partner_id: account.partnerId,
    secret_key: input.secret_key ?? null,
    created_at: now,
    updated_at: now,
  });
}

/**
 * Deleting deactivates: the subscription stays listed with is_active false (that is what the
 * is_active filter finds), receives nothing more, and a second delete answers 404.
 */
export function deactivateSubscription(account: Account, id: string): Subscription {
  const sub = subscriptions(account).require(id, 'webhook subscription');
  if (!sub.is_active) throw new ApiError(Errors.notFound, { message: `No active webhook subscription with id ${id}; it was already deleted.` });
  const deleted = subscriptions(account).update(id, { is_active: false, updated_at: account.clock.iso() });
  forgetOldDeleted(account);
  return deleted;
}

/** Keep the most recently deleted subscriptions listed; older deleted ones are dropped (their history stays). */
function forgetOldDeleted(account: Account): void {
  const all = subscriptions(account);
  // Counted without a walk of the deleted ones: their index may still list positions of removed
  // subscriptions (a CLI forwarder's, until the collection clears its tombstones).
  if (all.size - activeCount(account) <= LIMITS.webhookDeletedSubscriptionsKept) return;
  // Oldest first, so that of two deleted at the same instant the earlier goes first.
  const deleted = [...all.newest(DELETED)].filter((s) => !s.is_active).reverse();
  const excess = deleted.length - LIMITS.webhookDeletedSubscriptionsKept;
  if (excess <= 0) return;
  deleted.sort((a, b) => a.updated_at.localeCompare(b.updated_at));
  for (const sub of deleted.slice(0, excess)) all.remove(sub.id);
}

const NONE: readonly Subscription[] = Object.freeze([]);

/** Active subscriptions of a topic, oldest first (walks the topic index only); one shared empty list when there are none (most events). */
export function activeSubscriptions(account: Account, topic: string): readonly Subscription[] {
  const all = subscriptions(account);
  // Asked for every event recorded: an account with no subscriptions walks nothing.
  if (!all.size) return NONE;
  let found: Subscription[] | undefined;
  for (const sub of all.newest({ field: 'topic', value: topic })) if (sub.is_active) (found ??= []).push(sub);
  return found ? found.reverse() : NONE;
}
