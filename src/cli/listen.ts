// Owns `billing-sandbox listen [--topics a,b] [--forward-to URL]`: the account's webhook events and
// delivery attempts, one line each as they happen, from the live stream. With --forward-to the
// stream carries a forwarder: the sandbox's own ordered queue delivers every event of those topics to
// the URL (the real body and headers, in order, retried on the account's schedule) for as long as
// the command runs; the CLI never re-sends anything itself. Ctrl-C stops it and removes the forwarder.
import { Command, Option } from 'commander';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';
import type { Output } from './output.js';
import { followStream, stopSignal, type StreamMessage } from './stream.js';
import { checkTopic } from './trigger.js';

/** Column widths: time, kind, topic (the longest topic is 30 characters), entity. */
const WIDTHS = [24, 8, 30, 24];

/** A field of a stream message as text: the server sends JSON strings, numbers, booleans and nulls, printed as a template would. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
}

function deliveryStatus(out: Output, d: Record<string, unknown>): string {
  // A drill names itself: a copy of a delivered event, a wrong secret, an answer counted as a time-out.
  const copy = d.drill === 'duplicate_delivery' && d.duplicate_of;
  const attempt = `attempt ${text(d.attempt)}${copy ? ', duplicate' : d.drill ? `, drill ${text(d.drill)}` : ''}`;
  if (d.delivered) return out.colors.green(`${text(d.status_code)} delivered (${attempt})`);
  const why = text(d.error ?? `${text(d.status_code)}`);
  // A refused copy is not retried, and the queue goes on: the event was delivered already.
  const next = d.next_attempt_at ? `, next ${text(d.next_attempt_at)}` : copy ? '' : ', no retry left: queue paused';
  return out.colors.red(`failed: ${why} (${attempt}${next})`);
}

function print(out: Output, { type, data }: StreamMessage, mine: string | null): void {
  if (out.json) return out.data({ type, ...data });
  if (type === 'event') {
    out.columns([
      { text: String(data.timestamp), width: WIDTHS[0], paint: 'dim' },
      { text: 'event', width: WIDTHS[1], paint: 'cyan' },
      { text: String(data.topic), width: WIDTHS[2], paint: 'bold' },
      { text: String(data.entity_id), width: WIDTHS[3] },
      { text: String(data.idempotency_key), paint: 'dim' },
    ]);
  } else if (type === 'delivery') {
    const target = data.forwarder && data.forwarder === mine ? `forwarded to ${text(data.url)}` : `to ${text(data.url)}`;
    out.columns([
      { text: String(data.at), width: WIDTHS[0], paint: 'dim' },
      { text: 'delivery', width: WIDTHS[1], paint: 'magenta' },
      { text: String(data.topic), width: WIDTHS[2], paint: 'bold' },
      { text: text(data.entity_id ?? '-'), width: WIDTHS[3] },
      { text: `${target}  ${deliveryStatus(out, data)}` },
    ]);
  }
}

function topicList(raw: string): string[] {
  const topics = raw.split(',').map((t) => t.trim()).filter(Boolean);
  if (!topics.length) throw usageError('--topics needs at least one topic');
  return topics.map(checkTopic);
}

export function listenCommand(): Command {
  return withClientOptions(new Command('listen'))
    .description('stream the account\'s webhook events and delivery attempts as they happen; with --forward-to, also deliver them to a local URL')
    .addOption(new Option('--topics <a,b>', 'only these topics (comma-separated); also what --forward-to receives'))
    .addOption(new Option('--forward-to <url>', 'deliver every event (of --topics) to this URL through the account\'s ordered queue: real body and headers, in order, retried on the account\'s schedule; plain http allowed'))
    .addOption(new Option('--secret <secret>', 'with --forward-to: sent as Authorization: Bearer <secret>, as a subscription\'s secret_key is'))
    .action(clientAction(async ({ client, out }, flags: { topics?: string; forwardTo?: string; secret?: string }) => {
      const topics = flags.topics === undefined ? undefined : topicList(flags.topics);
      if (flags.secret !== undefined && flags.forwardTo === undefined) throw usageError('--secret is only used with --forward-to');
      if (flags.forwardTo !== undefined) {
        try {
          const url = new URL(flags.forwardTo);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
        } catch {
          throw usageError(`--forward-to must be an http or https URL, got "${flags.forwardTo}"`);
        }
      }
      const stop = stopSignal();
      let mine: string | null = null;
      try {
        await followStream(client, { types: ['event', 'delivery'], forwardTo: flags.forwardTo, topics, secret: flags.secret }, (message) => {
          if (message.type === 'ready') {
            mine = message.data.stream_id as string;
            const account = `${text(message.data.partner_id)} (${text(message.data.environment)})`;
            const forwarding = flags.forwardTo ? `; forwarding ${topics ? topics.join(', ') : 'every topic'} to ${flags.forwardTo}` : '';
            if (out.json) out.data({ type: 'ready', ...message.data });
            out.note(`Listening to ${account} at ${client.options.url}${forwarding} (Ctrl-C to stop)`);
            return;
          }
          if (topics && !topics.includes(String(message.data.topic))) return;
          print(out, message, mine);
        }, stop.signal);
        out.note('Stopped.');
      } finally {
        stop.dispose();
      }
    }));
}
