// Owns `billing-sandbox trigger <topic> [--entity-id ID] [--duplicate N]`: fire a webhook event as
// POST /_sandbox/events does; --duplicate N has it delivered N more times (a duplicate drill).
import { Command, InvalidArgumentError, Option } from 'commander';
import { TOPICS } from '../events/events.js';
import { LIMITS } from '../limits.js';
import { didYouMean } from '../suggest.js';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';

/** A topic the API knows, else a usage error naming the nearest one. */
export function checkTopic(topic: string): string {
  if (!(TOPICS as readonly string[]).includes(topic)) throw usageError(`unknown topic ${topic}${didYouMean(topic, TOPICS)} (topics: ${TOPICS.join(', ')})`);
  return topic;
}

/** --duplicate: the copies the sandbox sends, checked here too so a typo never fires an event. */
function copies(raw: string): number {
  const value = Number(raw);
  const max = LIMITS.webhookDuplicateCopies;
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > max) throw new InvalidArgumentError(`must be a whole number from 1 to ${max}.`);
  return value;
}

export function triggerCommand(): Command {
  return withClientOptions(new Command('trigger'))
    .description('fire a webhook event as the real operation would (it joins the account\'s ordered delivery queue); prints the event id')
    .argument('<topic>', `one of ${TOPICS.join(', ')}`)
    .addOption(new Option('--entity-id <id>', 'the object the event is about (default: the most recent of its kind, or a realistic new one)'))
    .addOption(new Option('--duplicate <n>', `once delivered, send the same event (same body and idempotency_key) n more times before the next event, 1 to ${LIMITS.webhookDuplicateCopies}: tests a receiver's deduplication`).argParser(copies))
    .action(clientAction(async ({ client, out }, topic: string, flags: { entityId?: string; duplicate?: number }) => {
      checkTopic(topic);
      const event = await out.wait(`Firing ${topic}`, client.control<{ idempotency_key: string; entity_id: string; topic: string; timestamp: string }>('POST', '/events', {
        body: { topic, ...(flags.entityId ? { entity_id: flags.entityId } : {}), ...(flags.duplicate ? { duplicate: flags.duplicate } : {}) },
      }));
      if (out.json) return out.data(event);
      out.line(event.idempotency_key);
      out.note(`${event.topic} on ${event.entity_id} at ${event.timestamp}${flags.duplicate ? `; delivered, then sent ${flags.duplicate} more time${flags.duplicate > 1 ? 's' : ''} with the same idempotency_key` : ''}`);
    }));
}
