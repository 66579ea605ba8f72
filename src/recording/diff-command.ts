// Owns `billing-sandbox diff RECORDING`: its flags, the run (replay.ts), the reports (text on stdout,
// or JSON with --json; JUnit with --junit) and the exit code, as `parity` has them: 0 when nothing
// differs but known choices, 1 when something does (or the sandbox refused to make the account),
// 2 for a usage error (a flag, a recording that cannot be read), 3 when nothing answers at
// --base-url. The replay loads only when the command runs.
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { positiveNumber, type CommandIo } from '../parity/command.js';
import { absoluteUrl } from './record-command.js';

export const DEFAULT_DIFF_BASE_URL = 'http://127.0.0.1:4010';

/** What diff writes to and exits with: as parity's (tests give their own). */
export type DiffIo = CommandIo;

const USAGE = new Set(['UsageError', 'RecordingError']);

export function diffCommand(io: DiffIo = {}): Command {
  const exit = io.exit ?? ((code: number) => { process.exitCode = code; });
  const stdout = io.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = io.stderr ?? ((text: string) => process.stderr.write(text));
  const progress = io.progress ?? Boolean(process.stderr.isTTY);
  return new Command('diff')
    .description('Replay a recording (from `billing-sandbox record`, or any HAR file) against the sandbox, on a fresh partner\'s account, and report per exchange what differs: status, error code, fields on one side only, types and enumerated values, Content-Type and Retry-After. Known choices of the sandbox are named, not failed.')
    .argument('<recording>', 'the HAR file to replay')
    .addOption(new Option('--base-url <url>', 'the sandbox, in the environment the recording was made in (add /demo for a demo recording)').argParser(absoluteUrl('--base-url')).default(DEFAULT_DIFF_BASE_URL))
    .addOption(new Option('--client-id <id>', 'replay on this key\'s account as it is, instead of a fresh partner\'s'))
    .addOption(new Option('--client-secret <secret>', 'its client_secret'))
    .addOption(new Option('--admin-token <token>', 'the sandbox\'s admin token, when it runs with one').env('SANDBOX_ADMIN_TOKEN'))
    .addOption(new Option('--rate <n>', 'requests per second at most').argParser(positiveNumber).default(5))
    .option('--junit <file>', 'also write the report as JUnit XML to this file')
    .option('--json', 'print the report as JSON instead of text')
    .showHelpAfterError()
    .exitOverride((error) => {
      (io.exit ?? process.exit)(error.exitCode === 0 ? 0 : 2);
      throw error;
    })
    .action(async (recording: string, flags: { baseUrl: string; clientId?: string; clientSecret?: string; adminToken?: string; rate: number; junit?: string; json?: boolean }) => {
      try {
        const [{ runDiff }, { diffJsonReport, diffJunitReport, diffTextReport }] = await Promise.all([import('./replay.js'), import('./diff-report.js')]);
        const mark = { same: '.', differ: 'D', known: 'k', skip: 's' } as const;
        const report = await runDiff({
          recording,
          baseUrl: flags.baseUrl,
          clientId: flags.clientId,
          clientSecret: flags.clientSecret,
          adminToken: flags.adminToken || undefined,
          rate: flags.rate,
          clock: io.clock,
          onResult: progress ? (r) => stderr(mark[r.status]) : undefined,
        });
        if (progress) stderr('\n');
        stdout(flags.json ? diffJsonReport(report) : diffTextReport(report));
        if (flags.junit) writeFileSync(flags.junit, diffJunitReport(report));
        exit(report.summary.differences > 0 ? 1 : 0);
      } catch (error) {
        const name = (error as Error).name;
        stderr(`billing-sandbox diff: ${(error as Error).message}\n`);
        exit(USAGE.has(name) ? 2 : name === 'UnreachableBaseUrl' ? 3 : 1);
      }
    });
}
