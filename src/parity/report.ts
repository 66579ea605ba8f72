// Owns the three forms of a parity report: a text table for people (stdout), JSON (--report) and
// JUnit XML (--junit) for partners' CI. The XML is written by hand: a fixed, small structure whose
// only difficulty is escaping, which one function does.
import type { CaseResult, ParityReport } from './runner.js';

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const;

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** The text report: a header, one line per case (with details under failures and skips), and the totals. */
export function textReport(report: ParityReport): string {
  const width = Math.max(...report.cases.map((c) => c.id.length), 4);
  const lines = [
    `billing-sandbox parity ${report.version} against ${report.base_url}`,
    `run ${report.run_id} (objects named ${report.prefix}...), started ${report.started_at}, at most ${report.options.rate} requests per second, money movement ${report.options.allow_money_movement ? 'allowed' : 'off'}${report.options.only ? `, only ${report.options.only.join(',')}` : ''}`,
    '',
    `${'result'.padEnd(6)}  ${'case'.padEnd(width)}  what it checks`,
  ];
  for (const c of report.cases) {
    lines.push(`${MARK[c.status].padEnd(6)}  ${c.id.padEnd(width)}  ${c.title}`);
    const indent = ' '.repeat(8);
    if (c.status === 'skip') lines.push(`${indent}skipped: ${c.reason}`);
    if (c.status === 'fail') for (const line of failureLines(c)) lines.push(`${indent}${line}`);
  }
  const { passed, failed, skipped, total } = report.summary;
  const left = Object.entries(report.cleanup.left).map(([kind, n]) => `${kind} ${n}`).join(', ');
  lines.push(
    '',
    `cleanup: ${report.cleanup.done} object(s) archived, deleted or deactivated at the end; ${report.cleanup.failed.length} refused${report.cleanup.failed.map((f) => ` (${f.request} answered ${f.status})`).join('')}${left ? `; left (the API cannot remove them): ${left}` : ''}`,
    `${report.requests.sent} requests, ${report.requests.throttled} answered 429 and retried, in ${seconds(report.duration_ms)} s`,
    `${passed} passed, ${failed} failed, ${skipped} skipped (${total} cases)`,
  );
  return `${lines.join('\n')}\n`;
}

export function jsonReport(report: ParityReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** XML-escape text for an attribute or element, dropping characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** What a failure says, line by line: the message, expected and observed, the body, the rule and the choices to revisit. */
function failureLines(c: CaseResult): string[] {
  const on = c.request ? ` on ${c.request}` : '';
  const statusLine = c.expected !== undefined ? `expected ${c.expected}, observed ${c.observed ?? 'no answer'}${on}` : c.observed !== undefined ? `observed ${c.observed}${on}` : undefined;
  // A wrong status says it all in the status line; other failures say what was checked first.
  const sameAsStatus = c.message === `${c.request} answered ${c.observed}, expected ${c.expected}`;
  return [
    sameAsStatus ? undefined : c.message,
    statusLine,
    c.body_excerpt ? `body: ${c.body_excerpt}` : undefined,
    `rule: ${c.rule.section}: ${c.rule.quote}`,
    ...c.gaps.map((gap) => `sandbox choice to revisit: "${gap}" (docs/gaps-and-choices.md)`),
  ].filter((line): line is string => Boolean(line));
}

/** JUnit XML: one testsuite per area, one testcase per case; skips are <skipped>, failures <failure>. */
export function junitReport(report: ParityReport): string {
  const attr = (name: string, value: string | number) => ` ${name}="${xmlEscape(String(value))}"`;
  const areas = new Map<string, CaseResult[]>();
  for (const c of report.cases) areas.set(c.area, [...(areas.get(c.area) ?? []), c]);
  const count = (list: CaseResult[], status: CaseResult['status']) => list.filter((c) => c.status === status).length;
  const time = (list: CaseResult[]) => (list.reduce((sum, c) => sum + c.duration_ms, 0) / 1000).toFixed(3);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attr('name', `billing-sandbox parity against ${report.base_url}`)}${attr('tests', report.summary.total)}${attr('failures', report.summary.failed)}${attr('skipped', report.summary.skipped)}${attr('errors', 0)}${attr('time', (report.duration_ms / 1000).toFixed(3))}>`,
  ];
  for (const [area, list] of areas) {
    out.push(`  <testsuite${attr('name', `parity.${area}`)}${attr('tests', list.length)}${attr('failures', count(list, 'fail'))}${attr('skipped', count(list, 'skip'))}${attr('errors', 0)}${attr('time', time(list))}${attr('timestamp', report.started_at.replace(/Z$/, ''))}>`);
    for (const c of list) {
      const open = `    <testcase${attr('classname', `parity.${area}`)}${attr('name', `${c.id}: ${c.title}`)}${attr('time', (c.duration_ms / 1000).toFixed(3))}`;
      if (c.status === 'pass') out.push(`${open}/>`);
      else if (c.status === 'skip') out.push(`${open}>`, `      <skipped${attr('message', c.reason ?? '')}/>`, '    </testcase>');
      else {
        out.push(`${open}>`, `      <failure${attr('message', c.message ?? 'failed')}${attr('type', c.expected !== undefined ? `expected ${c.expected}, observed ${c.observed ?? 'no answer'}` : 'failure')}>${xmlEscape(failureLines(c).join('\n'))}</failure>`, '    </testcase>');
      }
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
