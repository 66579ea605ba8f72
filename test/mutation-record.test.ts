// The mutation scores cannot go stale: every core file (scripts/lib/mutation-files.mjs) has one row in
// docs/mutation-scores.json, measured on the text the file holds now (git's blob id of its bytes), the
// table of docs/contributing.md is the one the record gives, and docs/equivalent-mutants.md lists
// exactly the mutants the record says no test detected (by function and edit, never by line).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBlock } from '../scripts/lib/generated-block.mjs';
import { entryOf, filesOf, MUTATION_FILES } from '../scripts/lib/mutation-files.mjs';
import { blobId, editText, keyOf, PAGE_PATH, pageEntries, readRecord, RECORD_PATH, renderTable } from '../scripts/lib/mutation-record.mjs';

const ROOT = join(new URL('.', import.meta.url).pathname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const record = readRecord(join(ROOT, RECORD_PATH));
const CORE = MUTATION_FILES.flatMap((entry) => filesOf(entry.mutate, ROOT).map((path) => ({ path, name: entry.name })));

describe('the mutation record (docs/mutation-scores.json)', () => {
  it('has one row for each core file and none for any other', () => {
    const rows = record.files.map((row) => row.path);
    const missing = CORE.filter(({ path }) => !rows.includes(path)).map(({ path, name }) => `${path} has no mutation score: run \`npm run mutate:files ${name}\``);
    expect(missing).toEqual([]);
    expect(rows.filter((path) => !CORE.some((core) => core.path === path))).toEqual([]);
    expect(new Set(rows).size).toBe(rows.length);
  });

  it('measured every core file as it is now (the row\'s blob id is the file\'s)', () => {
    const stale = record.files
      .filter((row) => blobId(readFileSync(join(ROOT, row.path))) !== row.blob)
      .map((row) => `${row.path} changed since its mutation score was measured: run \`npm run mutate:files ${entryOf(row.path, ROOT)?.name ?? row.run}\``);
    expect(stale).toEqual([]);
  });

  it('counts add up, and each row names the run that measures its file', () => {
    for (const row of record.files) {
      expect([row.path, row.mutants]).toEqual([row.path, row.detected + row.survived + row.not_covered]);
      expect([row.path, row.undetected.length]).toEqual([row.path, row.survived + row.not_covered]);
      expect([row.path, row.run]).toEqual([row.path, entryOf(row.path, ROOT)?.name]);
    }
  });

  it('is the table of docs/contributing.md, row for row', () => {
    expect(readBlock(read('docs/contributing.md'), 'mutation')).toBe(renderTable(record));
  });

  it('a blob id is git\'s (git hash-object), and an edit\'s text is collapsed and shortened the same way each time', () => {
    expect(blobId('')).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    expect(blobId('hello\n')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(blobId(Buffer.from('hello\n'))).toBe(blobId('hello\n'));
    expect(editText('if (a)\n    {  b(); }')).toBe('if (a) { b(); }');
    const long = `{ ${'x'.repeat(80)} return y; }`;
    expect(editText(long)).toBe(`{ ${'x'.repeat(38)}…${'x'.repeat(3)} return y; }`);
  });
});

describe('docs/equivalent-mutants.md against the record', () => {
  const entries = pageEntries(read(PAGE_PATH));
  const survivors = record.files.flatMap((row) => row.undetected.map((m) => ({ ...m, path: row.path })));
  const keys = new Set(survivors.map(keyOf));
  const listed = new Set(entries.map(keyOf));

  it('lists every mutant no test detected (as equivalent, or as a gap still open)', () => {
    const unlisted = survivors
      .filter((m) => !listed.has(keyOf(m)))
      .map((m) => `${keyOf(m)} (${m.mutator}, line ${m.line}): write the test that detects it, or add a row "| \`${m.function}\` | \`${m.original}\` -> \`${m.replacement}\` | why |" under ${m.path}`);
    expect(unlisted).toEqual([]);
  });

  it('lists nothing a test now detects (every entry names a current survivor)', () => {
    // A file without a row is named by the first test; its entries wait for its measurement.
    const measured = new Set(record.files.map((row) => row.path));
    const stale = entries.filter((e) => measured.has(e.path) && !keys.has(keyOf(e))).map((e) => `line ${e.line}: ${keyOf(e)} is no longer undetected: take it off the page`);
    expect(stale).toEqual([]);
  });

  it('reads function and edit columns: several of each, escaped pipes, code spans with backticks', () => {
    const page = [
      '## `src/a.ts`', '', '| function | edit | why |', '|---|---|---|',
      '| `f`, `g` | `a \\|\\| b` -> `a && b`; `x` -> `y` | same |',
      '| `h` | `` `t${x}` `` -> `""` | none |', '',
      '## Other', '| function | edit |', '|---|---|', '| `k` | `1` -> `2` |',
    ].join('\n');
    expect(pageEntries(page).map(keyOf)).toEqual([
      'src/a.ts f: `a || b` -> `a && b`', 'src/a.ts f: `x` -> `y`', 'src/a.ts g: `a || b` -> `a && b`', 'src/a.ts g: `x` -> `y`',
      'src/a.ts h: ``t${x}`` -> `""`',
    ]);
  });
});
