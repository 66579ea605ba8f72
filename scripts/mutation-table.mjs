// Prints the mutation score table from Stryker JSON reports (scripts/mutate-by-file.sh passes
// reports/mutation/<name>, this adds .json; missing ones are skipped). Score as Stryker counts it:
// killed and timed out over every valid mutant (survived and not covered included; compile errors and
// ignored mutants excluded). With --write it also puts the table into docs/contributing.md's generated
// block "mutation" (scripts/lib/generated-block.mjs), but only when every report named is there: a
// table of some files would drop the others' rows.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBlock } from './lib/generated-block.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WRITE = process.argv.includes('--write');
const bases = process.argv.slice(2).filter((arg) => arg !== '--write');
const missing = [];

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const rows = [];
for (const base of bases) {
  const file = base.endsWith('.json') ? base : `${base}.json`;
  if (!existsSync(file)) {
    missing.push(file);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const [path, { mutants }] of Object.entries(report.files)) {
    const count = (set) => mutants.filter((m) => set.has(m.status)).length;
    const survived = mutants.filter((m) => m.status === 'Survived').length;
    const noCoverage = mutants.filter((m) => m.status === 'NoCoverage').length;
    const detected = count(DETECTED);
    const total = detected + count(UNDETECTED);
    rows.push({ path, total, detected, survived, noCoverage, score: total ? (100 * detected) / total : 100 });
  }
}
rows.sort((a, b) => a.path.localeCompare(b.path));
const sum = (key) => rows.reduce((n, row) => n + row[key], 0);
const lines = ['| file | mutants | detected | survived | not covered | score |', '|---|---:|---:|---:|---:|---:|'];
for (const r of rows) lines.push(`| \`${r.path}\` | ${r.total} | ${r.detected} | ${r.survived} | ${r.noCoverage} | ${r.score.toFixed(1)}% |`);
const total = sum('total');
lines.push(`| all | ${total} | ${sum('detected')} | ${sum('survived')} | ${sum('noCoverage')} | ${total ? ((100 * sum('detected')) / total).toFixed(1) : '100.0'}% |`);
console.log(lines.join('\n'));
if (WRITE) {
  if (missing.length) {
    console.error(`docs/contributing.md not written: no report ${missing.join(', ')} (run npm run mutate:files for every file first)`);
  } else {
    writeBlock(join(ROOT, 'docs', 'contributing.md'), 'mutation', lines.join('\n'));
    console.error('docs/contributing.md: the mutation table written');
  }
}
