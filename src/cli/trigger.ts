// Owns `billing-sandbox trigger <topic> [--id ID] [--duplicate N]`: make the state a topic tells of and
// fire its event, as POST /_sandbox/events does; prints the event id, and what it made. --duplicate N
// has the event delivered N more times (a duplicate drill).
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

interface Fired {
  idempotency_key: string;
  entity_id: string;
  topic: string;
  timestamp: string;
  data: Record<string, unknown>;
  made: Array<{ object: string; id: string }>;
}

/** "customer cus_1, payment method pm_1, invoice inv_1". */
function madeText(made: Fired['made']): string {
  return made.map((m) => `${m.object.replace('_', ' ')} ${m.id}`).join(', ');
}

export function triggerCommand(): Command {
  return withClientOptions(new Command('trigger'))
    .description('make the state a topic tells of through the real operations and fire its event (invoice_paid: a customer, a card, an invoice, paid); prints the event id and what it made')
    .argument('<topic>', `one of ${TOPICS.join(', ')}`)
    .addOption(new Option('--id <id>', 'an existing object instead of new ones: moved to the topic\'s state when its state allows it (an unpaid invoice is paid), else refused'))
    // The flag's first name, kept for scripts written with it.
    .addOption(new Option('--entity-id <id>').hideHelp())
    .addOption(new Option('--duplicate <n>', `once delivered, send the same event (same body and idempotency_key) n more times before the next event, 1 to ${LIMITS.webhookDuplicateCopies}: tests a receiver's deduplication`).argParser(copies))
    .action(clientAction(async ({ client, out }, topic: string, flags: { id?: string; entityId?: string; duplicate?: number }) => {
      checkTopic(topic);
      if (flags.id && flags.entityId && flags.id !== flags.entityId) throw usageError('give the object once: --id (or its old name --entity-id)');
      const id = flags.id ?? flags.entityId;
      const event = await out.wait(`Firing ${topic}`, client.control<Fired>('POST', '/events', {
        body: { topic, ...(id ? { entity_id: id } : {}), ...(flags.duplicate ? { duplicate: flags.duplicate } : {}) },
      }));
      if (out.json) return out.data(event);
      out.line(event.idempotency_key);
      out.note(`${event.topic} on ${event.entity_id} at ${event.timestamp}${flags.duplicate ? `; delivered, then sent ${flags.duplicate} more time${flags.duplicate > 1 ? 's' : ''} with the same idempotency_key` : ''}`);
      if (event.made?.length) out.note(`made ${madeText(event.made)}`);
    }));
}
