// Owns `billing-sandbox clock` (print the account clock) and `clock advance 30d | --to RFC3339`.
import { Command, Option } from 'commander';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';
import { DurationError, parseDuration as parseSeconds } from '../client/duration.js';

/** `90s`, `15m`, `2h`, `30d`, or a sum of them (`1d12h`) -> seconds (src/client/duration.ts); anything else is a usage error. */
export function parseDuration(raw: string): number {
  try {
    return parseSeconds(raw);
  } catch (error) {
    if (error instanceof DurationError) throw usageError(error.message);
    throw error;
  }
}

interface ClockView {
  now: string;
  offset_seconds: number;
  ran?: number;
}

/** The clock's lead over real time, to the second (real time moves on during a call, so offsets are rarely whole). */
function describeOffset(offset: number): string {
  const seconds = Math.round(offset);
  if (!seconds) return 'real time';
  const days = Math.floor(seconds / 86_400);
  const rest = seconds - days * 86_400;
  const parts = [days ? `${days}d` : '', rest >= 3600 ? `${Math.floor(rest / 3600)}h` : '', rest % 3600 >= 60 ? `${Math.floor((rest % 3600) / 60)}m` : '', rest % 60 ? `${rest % 60}s` : ''];
  return `real time + ${parts.filter(Boolean).join('')}`;
}

export function clockCommand(): Command {
  const clock = withClientOptions(new Command('clock'))
    .description('print the account clock\'s now; `clock advance` moves it forward')
    .action(clientAction(async ({ client, out }) => {
      const view = await out.wait('Reading the clock', client.control<ClockView>('GET', '/clock'));
      if (out.json) return out.data(view);
      out.line(`${out.colors.bold(view.now)}  ${out.colors.dim(`(${describeOffset(view.offset_seconds)})`)}`);
    }));
  clock.addCommand(withClientOptions(new Command('advance'))
    .description('move the account clock forward, running everything that falls due (webhook retries, settlements, expiries, overdue invoices)')
    .argument('[duration]', 'how far: 90s, 15m, 2h, 30d (or a sum such as 1d12h)')
    .addOption(new Option('--to <time>', 'move to this RFC 3339 instant instead, e.g. 2026-04-01T00:00:00Z'))
    .action(clientAction(async ({ client, out }, duration: string | undefined, flags: { to?: string }) => {
      if ((duration === undefined) === (flags.to === undefined)) throw usageError('give a duration (e.g. `clock advance 30d`) or --to <RFC 3339 time>, not both');
      if (flags.to !== undefined && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(flags.to)) {
        throw usageError(`--to must be an RFC 3339 time such as 2026-04-01T00:00:00Z, got "${flags.to}"`);
      }
      const body = flags.to !== undefined ? { to: flags.to } : { seconds: parseDuration(duration!) };
      const view = await out.wait('Advancing the clock and running what falls due', client.control<ClockView>('POST', '/clock/advance', { body }));
      if (out.json) return out.data(view);
      out.line(`Clock now ${out.colors.bold(view.now)}  ${out.colors.dim(`(${describeOffset(view.offset_seconds)}; ${view.ran ?? 0} due job${view.ran === 1 ? '' : 's'} ran)`)}`);
    })));
  return clock;
}
