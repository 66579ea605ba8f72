// Prints the mutation score table of the README's Contributing section from Stryker JSON reports
// (scripts/mutate-by-file.sh passes reports/mutation/<name>, this adds .json; missing ones are
// skipped). Score as Stryker counts it: killed and timed out over every valid mutant (survived and
// not covered included; compile errors and ignored mutants excluded).
import { existsSync, readFileSync } from 'node:fs';

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const rows = [];
for (const base of process.argv.slice(2)) {
  const file = base.endsWith('.json') ? base : `${base}.json`;
  if (!existsSync(file)) continue;
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
console.log('| file | mutants | detected | survived | not covered | score |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| \`${r.path}\` | ${r.total} | ${r.detected} | ${r.survived} | ${r.noCoverage} | ${r.score.toFixed(1)}% |`);
const total = sum('total');
console.log(`| all | ${total} | ${sum('detected')} | ${sum('survived')} | ${sum('noCoverage')} | ${total ? ((100 * sum('detected')) / total).toFixed(1) : '100.0'}% |`);
