// Owns docs/mutation-scores.json, the committed record of the latest mutation measurement of each core
// file (scripts/lib/mutation-files.mjs): the git blob id of the text measured, the counts, and every
// mutant no test detected, each named by a key that survives edits elsewhere in the file (its
// function, and the text the edit replaces and puts instead; never a line number). From it come the
// score table of docs/contributing.md and the check of docs/equivalent-mutants.md
// (test/mutation-record.test.ts). No dependency beyond node: the test loads it on a clean checkout.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

export const RECORD_PATH = 'docs/mutation-scores.json';
export const PAGE_PATH = 'docs/equivalent-mutants.md';

/** Git's blob id of a file's bytes (`git hash-object`): sha1 of "blob <length>\0" and the bytes. */
export function blobId(content) {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** An edit's text as keys spell it: white space collapsed; past 60 characters, the first 40 and last 15 around `…`. */
export function editText(text) {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 60 ? flat : `${flat.slice(0, 40)}…${flat.slice(-15)}`;
}

/** The key a survivor and a line of docs/equivalent-mutants.md share. */
export function keyOf({ path, function: fn, original, replacement }) {
  return `${path} ${fn}: \`${original}\` -> \`${replacement}\``;
}

/** @returns {{ files: Array<{ path: string, run: string, blob: string, mutants: number, detected: number, survived: number, not_covered: number, undetected: Array<{ function: string, line: number, mutator: string, status: string, original: string, replacement: string }> }> }} */
export function readRecord(path = RECORD_PATH) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The record as written: one line per file's counts and per undetected mutant, so a diff shows what changed. */
export function formatRecord(record) {
  const files = record.files.map((file) => {
    const { undetected, ...counts } = file;
    const head = Object.entries(counts).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ');
    const list = undetected.map((m) => `      { ${Object.entries(m).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ')} }`).join(',\n');
    return `    { ${head},\n      "undetected": [${list ? `\n${list}\n    ` : ''}] }`;
  });
  return `{\n  "about": ${JSON.stringify(record.about)},\n  "files": [\n${files.join(',\n')}\n  ]\n}\n`;
}

export function writeRecord(record, path = RECORD_PATH) {
  record.files.sort((a, b) => a.path.localeCompare(b.path));
  writeFileSync(path, formatRecord(record));
}

const score = (detected, total) => (total ? (100 * detected) / total : 100).toFixed(1);

/** The score table of docs/contributing.md (its generated block "mutation"), from the record. */
export function renderTable(record) {
  const rows = [...record.files].sort((a, b) => a.path.localeCompare(b.path));
  const lines = ['| file | blob | mutants | detected | survived | not covered | score |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| \`${r.path}\` | \`${r.blob.slice(0, 12)}\` | ${r.mutants} | ${r.detected} | ${r.survived} | ${r.not_covered} | ${score(r.detected, r.mutants)}% |`);
  const sum = (key) => rows.reduce((n, row) => n + row[key], 0);
  lines.push(`| all | | ${sum('mutants')} | ${sum('detected')} | ${sum('survived')} | ${sum('not_covered')} | ${score(sum('detected'), sum('mutants'))}% |`);
  return lines.join('\n');
}

/** The code spans of a markdown table cell, `\|` read as `|`, with their places in the cell. */
function codeSpans(cell) {
  const spans = [];
  for (const m of cell.matchAll(/(`+)(.+?)\1(?!`)/g)) {
    let text = m[2].replace(/\\\|/g, '|');
    if (text.length > 2 && text.startsWith(' ') && text.endsWith(' ')) text = text.slice(1, -1);
    spans.push({ text, start: m.index, end: m.index + m[0].length });
  }
  return spans;
}

/** A table row's cells, split at the pipes that are not escaped. */
function cells(row) {
  return row.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/**
 * The entries of docs/equivalent-mutants.md: under a heading naming a file (`## \`src/...\``), every
 * row of a table whose first two columns are "function" and "edit" names one function or more (code
 * spans) and one edit or more, each `original` -> `replacement`; every pair of the two is an entry.
 */
export function pageEntries(text) {
  const entries = [];
  let path = null;
  let columns = null;
  text.split('\n').forEach((line, index) => {
    const heading = /^##\s+`([^`]+)`\s*$/.exec(line);
    if (heading) path = heading[1];
    else if (/^#{1,2}\s/.test(line)) path = null;
    if (!line.startsWith('|')) {
      columns = null;
      return;
    }
    const row = cells(line);
    if (!columns) {
      columns = row.map((cell) => cell.toLowerCase());
      return;
    }
    if (row.every((cell) => /^:?-+:?$/.test(cell)) || columns[0] !== 'function' || columns[1] !== 'edit' || !path) return;
    const functions = codeSpans(row[0]).map((span) => span.text);
    const spans = codeSpans(row[1]);
    const edits = [];
    for (let i = 0; i + 1 < spans.length; i++) {
      if (/^\s*->\s*$/.test(row[1].slice(spans[i].end, spans[i + 1].start))) edits.push([spans[i].text, spans[i + 1].text]);
    }
    for (const fn of functions) {
      for (const [original, replacement] of edits) entries.push({ path, function: fn, original, replacement, line: index + 1 });
    }
  });
  return entries;
}
