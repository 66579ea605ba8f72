// Owns CLI forwarders: webhook subscriptions that live exactly as long as the stream that asked for
// them (`GET /_sandbox/stream?forward_to=URL`). They join the account's own ordered delivery queue,
// so what a forwarding target receives is the real delivery (body, headers, order, retry schedule),
// never a copy re-sent by the CLI. They are hidden from GET /webhooks, allow plain http, and are
// re-made after an account reset. When the stream ends they are removed from the account, not
// deactivated: a stream leaves nothing behind (no subscription, no registry entry), so nothing grows
// with the streams a sandbox has seen. At start, whatever a stream cut by a crash left is removed.
import type { Deps } from '../deps.js';
import { TOPICS, type Topic } from '../events/events.js';
import { invalidFields } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { Account } from '../store/store.js';
import { webhookQueue } from '../webhooks/queue.js';
import { subscriptions } from '../webhooks/subscriptions.js';
import { defineStateValue } from '../store/module-state.js';

export interface ForwardSpec {
  url: string;
  topics: Topic[];
  /** Sent as the subscription's secret (Authorization: Bearer) like any subscription's. */
  secret: string | null;
}

/** Subscription ids of the live forwarders of an account, persisted so a restart can remove them. */
const registry = defineStateValue<string[]>('stream_forwarders', () => [], { type: 'array', items: { type: 'string' } });

/** Check the `forward_to`, `topics` and secret of a stream request; any problem is a 400 naming the field. */
export function forwardSpec(raw: { forward_to?: string; topics?: string }, secret: string | undefined): ForwardSpec | undefined {
  if (raw.forward_to === undefined) {
    if (raw.topics !== undefined) throw invalidFields({ topics: 'is only used with forward_to' });
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw.forward_to);
  } catch {
    throw invalidFields({ forward_to: 'must be an absolute http or https URL' });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw invalidFields({ forward_to: 'must be an absolute http or https URL' });
  if (raw.forward_to.length > LIMITS.webhookUrlChars) throw invalidFields({ forward_to: `must be at most ${LIMITS.webhookUrlChars} characters` });
  const topics = raw.topics === undefined ? [...TOPICS] : raw.topics.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = topics.filter((t) => !(TOPICS as readonly string[]).includes(t));
  if (!topics.length || unknown.length) throw invalidFields({ topics: `must be a comma-separated list of webhook topics${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}` });
  if (secret !== undefined && !/^[\x21-\x7e]{1,256}$/.test(secret)) {
    throw invalidFields({ 'X-Sandbox-Forward-Secret': 'must be 1 to 256 visible ASCII characters: it is sent in the Authorization header' });
  }
  return { url: raw.forward_to, topics: [...new Set(topics)] as Topic[], secret: secret ?? null };
}

/** One subscription per topic (subscriptions have one topic each), marked with the stream's id; one unit of work. */
export function addForwarder(account: Account, streamId: string, spec: ForwardSpec): string[] {
  return account.transaction(() => {
    const now = account.clock.iso();
    const ids = spec.topics.map((topic) => subscriptions(account).insert({
      id: account.newId('whs'),
      endpoint_url: spec.url,
      topic,
      is_active: true,
      partner_id: account.partnerId,
      secret_key: spec.secret,
      created_at: now,
      updated_at: now,
      forwarder: streamId,
    }).id);
    registry.update(account, (list) => list.push(...ids));
    return ids;
  });
}

/**
 * Remove a forwarder's subscriptions from the account, in one unit of work: their queued deliveries
 * leave the queue first (as for a deleted subscription; their history stays, it names the url), then
 * each subscription goes. Deactivated first, so that the active-subscription index never lists a
 * removed one. Ids no longer stored (an account reset took them) are passed over.
 */
export function removeForwarder(deps: Deps, account: Account, ids: readonly string[]): void {
  account.transaction(() => {
    const all = subscriptions(account);
    for (const id of ids) {
      const sub = all.get(id);
      if (!sub?.forwarder) continue;
      if (sub.is_active) webhookQueue(deps).dropSubscription(account, all.update(id, { is_active: false, updated_at: account.clock.iso() }));
      all.remove(id);
    }
    if (!registry.stored(account) || !registry.read(account).length) return;
    registry.update(account, (list) => {
      for (const id of ids) {
        const at = list.indexOf(id);
        if (at >= 0) list.splice(at, 1);
      }
    });
  });
}

/**
 * At start no stream is open: every forwarder subscription an earlier run left is removed, those its
 * registry names (a stream cut by a crash) and any other (an earlier version only deactivated them,
 * so a data file may hold thousands). Bulk work at start: walks each account's subscriptions once.
 */
export function sweepForwarders(deps: Deps): void {
  for (const account of deps.store.allAccounts()) {
    const left = new Set(registry.stored(account) ? registry.read(account) : []);
    if (Object.hasOwn(account.data.collections, subscriptions(account).name)) {
      for (const sub of subscriptions(account).values()) if (sub.forwarder) left.add(sub.id);
    }
    if (left.size) removeForwarder(deps, account, [...left]);
  }
}
