// Owns `billing-sandbox record --target URL`: the recording proxy (proxy.ts) on a local port, one
// line per exchange on the terminal, and Ctrl-C (or SIGTERM) finishing the file: requests under way
// complete, the HAR's end is written, the count is printed, exit 0. A second Ctrl-C cuts what is
// still under way and still finishes the file. The proxy loads only when the command runs.
import { Command, InvalidArgumentError, Option } from 'commander';
import { CliError, EXIT, usageError } from '../cli/errors.js';
import { stopSignal } from '../cli/stream.js';
import type { RecordedLine } from './proxy.js';

export const DEFAULT_RECORD_PORT = 4020;
export const DEFAULT_RECORDING = 'recording.har';

export function absoluteUrl(flag: string) {
  return (raw: string): string => {
    try {
      const url = new URL(raw);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      if (url.search || url.hash) throw new Error('query');
      return raw.replace(/\/+$/, '');
    } catch {
      throw new InvalidArgumentError(`${flag} must be an absolute http(s) base URL without a query, got "${raw}".`);
    }
  };
}

function port(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new InvalidArgumentError('--port must be a whole number from 0 to 65535.');
  return value;
}

export interface RecordIo {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Ends the recording (default: Ctrl-C or SIGTERM). */
  signal?: AbortSignal;
  /** Told the proxy's URL once it listens (tests). */
  onListening?: (url: string) => void;
}

/** One exchange on the terminal: number, method, status (--- for no answer), time, path. */
export function exchangeLine(line: RecordedLine): string {
  const status = line.status ? String(line.status) : '---';
  const notes = [line.error, line.notRecorded ? 'not recorded: the recording is full' : undefined].filter(Boolean);
  return `${String(line.index).padStart(5)}  ${line.method.padEnd(6)}  ${status}  ${`${Math.round(line.ms)} ms`.padStart(8)}  ${line.path}${notes.length ? `  (${notes.join('; ')})` : ''}`;
}

export function recordCommand(io: RecordIo = {}): Command {
  const stdout = io.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = io.stderr ?? ((text: string) => process.stderr.write(text));
  return new Command('record')
    .description('Record the exchanges with an API: a local proxy forwards every request to --target (the real demo environment, with your demo key) and writes each exchange to a HAR file, credentials and secrets masked. Ctrl-C finishes the file; `billing-sandbox diff` replays it against the sandbox.')
    .addOption(new Option('--target <url>', 'base URL to forward to, e.g. the demo environment\'s (required)').argParser(absoluteUrl('--target')))
    .addOption(new Option('--port <n>', 'port the proxy listens on; 0 picks a free one').argParser(port).default(DEFAULT_RECORD_PORT))
    .addOption(new Option('--host <address>', 'address the proxy listens on').default('127.0.0.1'))
    .addOption(new Option('--out <file>', 'the recording to write (HAR 1.2)').default(DEFAULT_RECORDING))
    .option('--overwrite', 'replace --out when it exists (otherwise an existing file is refused)')
    .action(async (flags: { target?: string; port: number; host: string; out: string; overwrite?: boolean }) => {
      if (!flags.target) throw usageError('record needs --target <url>: the base URL to forward to');
      const { probeTarget, startRecorder } = await import('./proxy.js');
      let recorder: Awaited<ReturnType<typeof startRecorder>>;
      try {
        recorder = await startRecorder({
          target: flags.target,
          out: flags.out,
          overwrite: flags.overwrite,
          port: flags.port,
          host: flags.host,
          onExchange: (line) => stdout(`${exchangeLine(line)}\n`),
          onFull: (max) => stderr(`warning: the recording holds ${max} exchanges, its most (LIMITS.recordExchanges): later requests are forwarded but not written. Ctrl-C finishes this file; start another record for the rest.\n`),
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') throw usageError(`${flags.out} exists already: choose another --out, or add --overwrite`);
        if (code === 'EADDRINUSE') throw usageError(`port ${flags.port} is taken: choose another --port (0 picks a free one)`);
        if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw usageError(`cannot write ${flags.out} (${code})`);
        throw new CliError(`record could not start: ${(error as Error).message}`, EXIT.refused);
      }
      stdout(`billing-sandbox record listening on ${recorder.url} (forwarding to ${flags.target}, writing ${flags.out}; Ctrl-C finishes the file)\n`);
      // Said at once, not at the first request: a wrong --target is the likeliest mistake.
      const unreachable = await probeTarget(flags.target);
      if (unreachable) stderr(`warning: ${flags.target} cannot be reached now (${unreachable}): requests through the proxy are answered 502 bad_gateway, and recorded as without an answer, until it can. Check --target.\n`);
      io.onListening?.(recorder.url);
      const stop = io.signal ? { signal: io.signal, dispose() {} } : stopSignal();
      // A second Ctrl-C while requests finish: cut them, and still write the end of the file.
      const cut = () => recorder.abort();
      try {
        await new Promise<void>((resolve) => {
          if (stop.signal.aborted) resolve();
          else stop.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (!io.signal) {
          process.once('SIGINT', cut);
          process.once('SIGTERM', cut);
        }
        await recorder.close();
      } finally {
        stop.dispose();
        process.off('SIGINT', cut);
        process.off('SIGTERM', cut);
      }
      const dropped = recorder.notRecorded ? ` (${recorder.notRecorded} more forwarded but not written: the recording was full)` : '';
      stderr(`Recorded ${recorder.count} exchange${recorder.count === 1 ? '' : 's'} in ${flags.out}${dropped}.\n`);
    });
}
