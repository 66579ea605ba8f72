// Owns `billing-sandbox requests [--follow] [--method M] [--path P]`: the account's request journal,
// newest first, one line per request; --follow then streams new ones (the live stream's `request`
// messages) until Ctrl-C.
import { Command, InvalidArgumentError, Option } from 'commander';
import { pathMatches } from '../scenarios/engine.js';
import { CLI_USER_AGENT, clientAction, withClientOptions } from './client.js';
import type { Output, Row } from './output.js';
import { followStream, stopSignal } from './stream.js';

interface RequestSummary {
  request?: { headers?: Record<string, string> };
  id: string;
  at: string;
  method: string;
  path: string;
  template?: string | null;
  operation: string | null;
  status: number;
  duration_ms: number;
}

const HEADER = ['TIME', 'METHOD', 'PATH', 'STATUS', 'MS', 'OPERATION'];
const WIDTHS = [24, 6, 40, 6, 8, 0];

function statusPaint(status: number) {
  return status === 0 || status >= 500 ? 'red' as const : status >= 400 ? 'yellow' as const : 'green' as const;
}

function row(r: RequestSummary): Row {
  return [r.at, { text: r.method, paint: 'bold' }, r.path, { text: r.status === 0 ? 'cut' : String(r.status), paint: statusPaint(r.status) }, r.duration_ms.toFixed(1), { text: r.operation ?? '-', paint: 'dim' }];
}

function printLive(out: Output, r: RequestSummary): void {
  if (out.json) return out.data(r);
  out.columns(row(r).map((cell, i) => ({ ...(typeof cell === 'string' ? { text: cell } : cell), width: WIDTHS[i] })));
}

function whole(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1000) throw new InvalidArgumentError('must be a whole number from 1 to 1000.');
  return value;
}

export function requestsCommand(): Command {
  return withClientOptions(new Command('requests'))
    .description('show the account\'s request journal, newest first, one line per request')
    .addOption(new Option('--method <method>', 'only requests with this HTTP method'))
    .addOption(new Option('--path <path>', 'only requests to this path: concrete (/invoices/inv_1) or a template (/invoices/{id})'))
    .addOption(new Option('--limit <n>', 'at most this many from the journal (default 50)').argParser(whole))
    .addOption(new Option('--all', 'also show the token requests this command line made itself (hidden by default)'))
    .addOption(new Option('-f, --follow', 'then keep printing new requests as they arrive (oldest first, like tail -f) until Ctrl-C'))
    .action(clientAction(async ({ client, out }, flags: { method?: string; path?: string; limit?: number; follow?: boolean; all?: boolean }) => {
      // Every command gets a token first: those requests are the CLI's, not the partner's. The server
      // leaves them out before the limit applies, so --limit 5 shows five of the partner's.
      const query = { method: flags.method, path: flags.path, limit: flags.limit ?? 50, exclude_user_agent: flags.all ? undefined : CLI_USER_AGENT };
      const { data } = await out.wait('Reading the journal', client.control<{ data: RequestSummary[] }>('GET', '/requests', { query }));
      if (!flags.follow) {
        if (out.json) return out.data({ data });
        if (!data.length) return out.line('No requests journaled for this account yet.');
        return out.table(HEADER, data.map(row));
      }
      // Following: history oldest first, then each new request below it, as tail -f does.
      if (!out.json) out.columns(HEADER.map((text, i) => ({ text, width: WIDTHS[i], paint: 'bold' as const })));
      for (const r of [...data].reverse()) printLive(out, r);
      const method = flags.method?.toUpperCase();
      const stop = stopSignal();
      out.note('Following new requests (Ctrl-C to stop)');
      try {
        await followStream(client, { types: ['request'] }, ({ type, data: r }) => {
          if (type !== 'request') return;
          // The server's request events carry its journal summaries (the stream's own shape).
          const summary = r as unknown as RequestSummary;
          if (method && summary.method !== method) return;
          if (flags.path && !pathMatches(flags.path, summary.path, summary.template ?? null)) return;
          printLive(out, summary);
        }, stop.signal);
      } finally {
        stop.dispose();
      }
    }));
}
