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

/** One testcase of a JUnit file: passed unless it has a failure or is skipped; `output` goes to <system-out>. */
export interface JunitCase {
  classname: string;
  name: string;
  duration_ms: number;
  failure?: { message: string; type: string; text: string };
  skipped?: string;
  output?: string;
}

export interface JunitSuite {
  name: string;
  /** ISO time the suite started. */
  started_at: string;
  cases: JunitCase[];
}

/** A JUnit XML document (the form CI servers read): testsuites, one testsuite each, one testcase per case. */
export function junitXml(name: string, durationMs: number, suites: JunitSuite[]): string {
  const attr = (key: string, value: string | number) => ` ${key}="${xmlEscape(String(value))}"`;
  const cases = suites.flatMap((s) => s.cases);
  const failures = (list: JunitCase[]) => list.filter((c) => c.failure).length;
  const skips = (list: JunitCase[]) => list.filter((c) => !c.failure && c.skipped !== undefined).length;
  const time = (list: JunitCase[]) => (list.reduce((sum, c) => sum + c.duration_ms, 0) / 1000).toFixed(3);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attr('name', name)}${attr('tests', cases.length)}${attr('failures', failures(cases))}${attr('skipped', skips(cases))}${attr('errors', 0)}${attr('time', (durationMs / 1000).toFixed(3))}>`,
  ];
  for (const suite of suites) {
    out.push(`  <testsuite${attr('name', suite.name)}${attr('tests', suite.cases.length)}${attr('failures', failures(suite.cases))}${attr('skipped', skips(suite.cases))}${attr('errors', 0)}${attr('time', time(suite.cases))}${attr('timestamp', suite.started_at.replace(/Z$/, ''))}>`);
    for (const c of suite.cases) {
      const open = `    <testcase${attr('classname', c.classname)}${attr('name', c.name)}${attr('time', (c.duration_ms / 1000).toFixed(3))}`;
      const inner: string[] = [];
      if (c.failure) inner.push(`      <failure${attr('message', c.failure.message)}${attr('type', c.failure.type)}>${xmlEscape(c.failure.text)}</failure>`);
      else if (c.skipped !== undefined) inner.push(`      <skipped${attr('message', c.skipped)}/>`);
      if (c.output) inner.push(`      <system-out>${xmlEscape(c.output)}</system-out>`);
      if (!inner.length) out.push(`${open}/>`);
      else out.push(`${open}>`, ...inner, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

/** JUnit XML: one testsuite per area, one testcase per case; skips are <skipped>, failures <failure>. */
export function junitReport(report: ParityReport): string {
  const areas = new Map<string, CaseResult[]>();
  for (const c of report.cases) areas.set(c.area, [...(areas.get(c.area) ?? []), c]);
  const suites: JunitSuite[] = [...areas].map(([area, list]) => ({
    name: `parity.${area}`,
    started_at: report.started_at,
    cases: list.map((c): JunitCase => ({
      classname: `parity.${area}`,
      name: `${c.id}: ${c.title}`,
      duration_ms: c.duration_ms,
      ...(c.status === 'skip' ? { skipped: c.reason ?? '' } : {}),
      ...(c.status === 'fail' ? { failure: { message: c.message ?? 'failed', type: c.expected !== undefined ? `expected ${c.expected}, observed ${c.observed ?? 'no answer'}` : 'failure', text: failureLines(c).join('\n') } } : {}),
    })),
  }));
  return junitXml(`billing-sandbox parity against ${report.base_url}`, report.duration_ms, suites);
}
