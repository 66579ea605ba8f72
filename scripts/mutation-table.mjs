// The mutation scores: folds Stryker JSON reports into the committed record docs/mutation-scores.json
// (scripts/lib/mutation-record.mjs) and writes the score table of docs/contributing.md (its generated
// block "mutation", scripts/lib/generated-block.mjs) from the record.
//
//   node scripts/mutation-table.mjs --record queue [name ...]  fold reports/mutation/<name>.json in, write the table
//   node scripts/mutation-table.mjs                            print the table the record gives
//
// A report replaces the rows of the files its name mutates, and only those: the other rows stay as
// last measured, each with the blob id of the text it measured, so a row of a file changed since is
// found stale by test/mutation-record.test.ts. Score as Stryker counts it: killed and timed out over
// every valid mutant (survived and not covered included; compile errors and ignored mutants excluded).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { writeBlock } from './lib/generated-block.mjs';
import { MUTATION_FILES } from './lib/mutation-files.mjs';
import { blobId, editText, readRecord, RECORD_PATH, renderTable, writeRecord } from './lib/mutation-record.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** The name of the innermost named function around `position` (an arrow or function expression takes the name it is bound to). */
function functionAt(file, position) {
  let found = '(module)';
  const nameOf = (node) => {
    if (ts.isConstructorDeclaration(node)) return 'constructor';
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isFunctionExpression(node)) && node.name) return node.name.getText(file);
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const parent = node.parent;
      if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) return parent.name.getText(file);
    }
    return undefined;
  };
  const visit = (node) => {
    if (position < node.getStart(file) || position >= node.getEnd()) return;
    found = nameOf(node) ?? found;
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(file, visit);
  return found;
}

/** The record's rows for one Stryker report. */
function rowsOf(report, run) {
  return Object.entries(report.files).map(([path, { source, mutants }]) => {
    const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
    const offset = ({ line, column }) => file.getPositionOfLineAndCharacter(line - 1, column - 1);
    const count = (set) => mutants.filter((m) => set.has(m.status)).length;
    const undetected = mutants
      .filter((m) => UNDETECTED.has(m.status))
      .map((m) => {
        const start = offset(m.location.start);
        return {
          function: functionAt(file, start),
          line: m.location.start.line,
          mutator: m.mutatorName,
          status: m.status,
          original: editText(source.slice(start, offset(m.location.end))),
          replacement: editText(m.replacement ?? ''),
        };
      })
      .sort((a, b) => a.line - b.line || a.mutator.localeCompare(b.mutator) || a.replacement.localeCompare(b.replacement));
    return {
      path,
      run,
      blob: blobId(source),
      mutants: count(DETECTED) + count(UNDETECTED),
      detected: count(DETECTED),
      survived: count(new Set(['Survived'])),
      not_covered: count(new Set(['NoCoverage'])),
      undetected,
    };
  });
}

const args = process.argv.slice(2);
const record = existsSync(RECORD_PATH)
  ? readRecord()
  : { about: 'The latest mutation measurement of each core file; written by npm run mutate:files, never by hand (docs/contributing.md#scores).', files: [] };
if (args[0] === '--record') {
  for (const run of args.slice(1)) {
    if (!MUTATION_FILES.some((entry) => entry.name === run)) throw new Error(`unknown file name: ${run}`);
    const report = `reports/mutation/${run}.json`;
    if (!existsSync(report)) throw new Error(`no report ${report}: run npm run mutate:files ${run}`);
    record.files = [...record.files.filter((row) => row.run !== run), ...rowsOf(JSON.parse(readFileSync(report, 'utf8')), run)];
  }
  writeRecord(record);
  writeBlock(join(ROOT, 'docs', 'contributing.md'), 'mutation', renderTable(record));
  console.error(`${RECORD_PATH} and the table of docs/contributing.md written`);
}
console.log(renderTable(record));
