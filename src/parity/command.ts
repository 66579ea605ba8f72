// Owns `billing-sandbox parity`: its flags (each with an environment variable, so a CI secret need
// not appear on a command line), the run, the three reports and the exit code: 0 when no case
// failed (skips do not fail a run), 1 when one did, 2 for a usage error, 3 when the base URL gives
// no answer at all. The suite itself (cases,
// runner, reports) loads only when the command runs, so serving the sandbox does not pay for it.
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { AREAS, DEFAULT_RATE, UsageError } from './case.js';
import type { ClientClock } from './client.js';
import type { RunOptions } from './runner.js';

/** The --rate flag's parser (parity's and diff's): requests per second, a number above 0. */
export function positiveNumber(raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('--rate must be a number of requests per second greater than 0.');
  return value;
}

function absoluteUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    return raw;
  } catch {
    throw new InvalidArgumentError(`${raw} is not an absolute http(s) URL.`);
  }
}

function list(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** The cases as a table (id, rule section, gaps rows), for --list. */
async function catalogue(only?: string[]): Promise<string> {
  const [{ CASES }, { selectCases }] = await Promise.all([import('./cases/index.js'), import('./runner.js')]);
  return selectCases(CASES, only).map((c) => `${c.id}\t${c.rule.section}${c.gaps?.length ? `\t[${c.gaps.join('; ')}]` : ''}${c.movesMoney ? '\t(moves money)' : ''}`).join('\n');
}

export interface CommandIo {
  /**
   * Receives the exit code (default: process.exitCode once the run is done; process.exit for a
   * flag commander refuses, as commander itself would).
   */
  exit?: (code: number) => void;
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  /** Progress dots (default: when stderr is a terminal). */
  progress?: boolean;
  /** The limiter's clock (tests use one whose waits take no real time). */
  clock?: ClientClock;
}

/** The runner's UnreachableBaseUrl, known by name: the runner is loaded only when a run starts. */
function isUnreachable(error: unknown): boolean {
  return error instanceof Error && error.name === 'UnreachableBaseUrl';
}

export function parityCommand(io: CommandIo = {}): Command {
  const exit = io.exit ?? ((code: number) => { process.exitCode = code; });
  const stdout = io.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = io.stderr ?? ((text: string) => process.stderr.write(text));
  const progress = io.progress ?? Boolean(process.stderr.isTTY);
  return new Command('parity')
    .description('Run the parity suite (the API\'s documented behaviour, black-box) against a base URL: the sandbox, or the real demo environment with a demo key.')
    .addOption(new Option('--base-url <url>', 'base URL of the API to check, e.g. http://127.0.0.1:4010 or the demo environment\'s').env('PARITY_BASE_URL').argParser(absoluteUrl))
    .addOption(new Option('--client-id <id>', 'client_id of a key of that environment').env('PARITY_CLIENT_ID'))
    .addOption(new Option('--client-secret <secret>', 'its client_secret').env('PARITY_CLIENT_SECRET'))
    .option('--only <areas>', `run only these areas or case ids, comma-separated (areas: ${AREAS.join(', ')})`, list)
    .option('--report <file>', 'write the report as JSON to this file')
    .option('--junit <file>', 'write the report as JUnit XML to this file')
    .option('--allow-money-movement', 'also run the cases that initiate vendor payments (off: never moves money)', false)
    .addOption(new Option('--rate <n>', 'requests per second at most (the spec allows 5 per key)').argParser(positiveNumber).default(DEFAULT_RATE))
    .addOption(new Option('--other-base-url <url>', 'base URL of the other environment (derived for a local sandbox; needed for the real service\'s separate hosts)').argParser(absoluteUrl))
    .option('--list', 'list the cases (id, spec section, sandbox choices) and exit')
    .showHelpAfterError()
    // Commander's own refusals (an unknown flag, a bad --rate) are usage errors too: exit 2, not its 1.
    .exitOverride((error) => {
      (io.exit ?? process.exit)(error.exitCode === 0 ? 0 : 2);
      throw error;
    })
    .action(async (flags) => {
      try {
        if (flags.list) {
          stdout(`${await catalogue(flags.only)}\n`);
          exit(0);
          return;
        }
        const missing = [['--base-url', flags.baseUrl], ['--client-id', flags.clientId], ['--client-secret', flags.clientSecret]].filter(([, v]) => !v).map(([n]) => n);
        if (missing.length) throw new UsageError(`missing ${missing.join(', ')} (or PARITY_BASE_URL, PARITY_CLIENT_ID, PARITY_CLIENT_SECRET)`);
        const options: RunOptions = {
          baseUrl: flags.baseUrl,
          clientId: flags.clientId,
          clientSecret: flags.clientSecret,
          only: flags.only,
          rate: flags.rate,
          allowMoneyMovement: flags.allowMoneyMovement,
          otherBaseUrl: flags.otherBaseUrl,
          clock: io.clock,
          onResult: progress ? (r) => stderr(r.status === 'pass' ? '.' : r.status === 'fail' ? 'F' : 's') : undefined,
        };
        const [{ runParity }, { jsonReport, junitReport, textReport }] = await Promise.all([import('./runner.js'), import('./report.js')]);
        const report = await runParity(options);
        if (progress) stderr('\n');
        stdout(textReport(report));
        if (flags.report) writeFileSync(flags.report, jsonReport(report));
        if (flags.junit) writeFileSync(flags.junit, junitReport(report));
        exit(report.summary.failed > 0 ? 1 : 0);
      } catch (error) {
        stderr(`billing-sandbox parity: ${(error as Error).message}\n`);
        exit(error instanceof UsageError ? 2 : isUnreachable(error) ? 3 : 1);
      }
    });
}
