// Owns `billing-sandbox trigger <topic> [--id ID]`: make the state a topic tells of and fire its event,
// as POST /_sandbox/events does; prints the event id, and what it made.
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
    .action(clientAction(async ({ client, out }, topic: string, flags: { id?: string; entityId?: string }) => {
      checkTopic(topic);
      if (flags.id && flags.entityId && flags.id !== flags.entityId) throw usageError('give the object once: --id (or its old name --entity-id)');
      const id = flags.id ?? flags.entityId;
      const event = await out.wait(`Firing ${topic}`, client.control<Fired>('POST', '/events', { body: { topic, ...(id ? { entity_id: id } : {}) } }));
      if (out.json) return out.data(event);
      out.line(event.idempotency_key);
      out.note(`${event.topic} on ${event.entity_id} at ${event.timestamp}`);
      if (event.made?.length) out.note(`made ${madeText(event.made)}`);
    }));
}
