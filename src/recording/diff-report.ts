// Owns the three forms of a `diff` report, as `parity` writes its own: a text table for people (one
// line per exchange, its differences under it, known choices named with their row), JSON (--json)
// and JUnit XML (--junit, through parity's writer: one testcase per exchange, a <failure> for a
// difference, <skipped> for an exchange not replayed, known choices in <system-out>).
import { junitXml, type JunitCase } from '../parity/report.js';
import { describeDifference, type Difference } from './compare.js';
import type { DiffReport, ExchangeResult } from './replay.js';

const MARK = { same: 'SAME', differ: 'DIFF', known: 'KNOWN', skip: 'SKIP' } as const;

/** A difference as a report line, with the choice it is known as. */
export function differenceLine(d: Difference): string {
  return `${describeDifference(d)}${d.choice ? `  (known choice: "${d.choice}", docs/gaps-and-choices.md)` : ''}`;
}

function detailLines(e: ExchangeResult): string[] {
  if (e.status === 'skip') return [`skipped: ${e.reason}`];
  return e.differences.map(differenceLine);
}

function accountLine(report: DiffReport): string {
  const { account } = report;
  const whose = account.fresh ? `a fresh partner ${account.partner_id} (diff-${report.run_id}), its ${account.environment} key ${account.client_id}` : `the ${account.environment} account of ${account.client_id}, as it was`;
  return `account: ${whose}; started ${report.started_at}, at most ${report.rate} requests per second`;
}

export function diffTextReport(report: DiffReport): string {
  const width = Math.max(String(report.exchanges.length).length, 1);
  const lines = [
    `billing-sandbox diff ${report.version}: ${report.recording}${report.recorded_against ? ` (recorded against ${report.recorded_against})` : ''} replayed against ${report.base_url}`,
    accountLine(report),
    '',
    `${'result'.padEnd(6)}  ${'#'.padStart(width)}  request`,
  ];
  const indent = ' '.repeat(6 + 2 + width + 2);
  for (const e of report.exchanges) {
    lines.push(`${MARK[e.status].padEnd(6)}  ${String(e.index).padStart(width)}  ${e.request}`);
    for (const line of detailLines(e)) lines.push(`${indent}${line}`);
  }
  const { summary, mapped } = report;
  lines.push('');
  for (const note of report.notes) lines.push(`note: ${note}`);
  lines.push(
    `mapped from the recording to the sandbox: ${mapped.ids} id${mapped.ids === 1 ? '' : 's'}, ${mapped.masked} masked value${mapped.masked === 1 ? '' : 's'} (tokens)`,
    `${summary.exchanges} exchanges: ${summary.same} same, ${summary.differ} differ, ${summary.known} with known choices only, ${summary.skipped} skipped; ${summary.differences} difference${summary.differences === 1 ? '' : 's'}, ${summary.known_differences} known choice${summary.known_differences === 1 ? '' : 's'}`,
  );
  return `${lines.join('\n')}\n`;
}

export function diffJsonReport(report: DiffReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export function diffJunitReport(report: DiffReport): string {
  const cases = report.exchanges.map((e): JunitCase => {
    const unexplained = e.differences.filter((d) => !d.choice);
    const known = e.differences.filter((d) => d.choice);
    return {
      classname: 'diff',
      name: `#${e.index} ${e.request}`,
      duration_ms: e.duration_ms,
      ...(e.status === 'skip' ? { skipped: e.reason ?? '' } : {}),
      ...(unexplained.length ? { failure: { message: describeDifference(unexplained[0]), type: `${unexplained.length} difference${unexplained.length === 1 ? '' : 's'}`, text: detailLines(e).join('\n') } } : {}),
      ...(known.length && !unexplained.length ? { output: known.map(differenceLine).join('\n') } : {}),
    };
  });
  return junitXml(`billing-sandbox diff of ${report.recording} against ${report.base_url}`, report.duration_ms, [{ name: 'diff', started_at: report.started_at, cases }]);
}
