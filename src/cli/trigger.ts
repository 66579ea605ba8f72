// Owns `billing-sandbox trigger <topic> [--entity-id ID]`: fire a webhook event as POST /_sandbox/events does.
import { Command, Option } from 'commander';
import { TOPICS } from '../events/events.js';
import { didYouMean } from '../suggest.js';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';

/** A topic the API knows, else a usage error naming the nearest one. */
export function checkTopic(topic: string): string {
  if (!(TOPICS as readonly string[]).includes(topic)) throw usageError(`unknown topic ${topic}${didYouMean(topic, TOPICS)} (topics: ${TOPICS.join(', ')})`);
  return topic;
}

export function triggerCommand(): Command {
  return withClientOptions(new Command('trigger'))
    .description('fire a webhook event as the real operation would (it joins the account\'s ordered delivery queue); prints the event id')
    .argument('<topic>', `one of ${TOPICS.join(', ')}`)
    .addOption(new Option('--entity-id <id>', 'the object the event is about (default: the most recent of its kind, or a realistic new one)'))
    .action(clientAction(async ({ client, out }, topic: string, flags: { entityId?: string }) => {
      checkTopic(topic);
      const event = await out.wait(`Firing ${topic}`, client.control<{ idempotency_key: string; entity_id: string; topic: string; timestamp: string }>('POST', '/events', {
        body: { topic, ...(flags.entityId ? { entity_id: flags.entityId } : {}) },
      }));
      if (out.json) return out.data(event);
      out.line(event.idempotency_key);
      out.note(`${event.topic} on ${event.entity_id} at ${event.timestamp}`);
    }));
}
