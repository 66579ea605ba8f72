// Owns the rule that the README and docs/ show only code that CI runs: every fenced block in README.md
// and docs/*.md is a quote of a file under examples/, named by a marker on the line above it,
//
//   <!-- example: examples/readme/first-call.sh -->            the whole file
//   <!-- example: examples/vitest/webhook-receiver.test.ts#receiver -->   the lines between
//                                                              `#region receiver` and `#endregion receiver`
//   <!-- example: examples/parity/sample-report.txt excerpt -->   some lines of the file, in order,
//                                                              with `...` lines standing for the rest
//
// and the block must equal that source (a region is dedented; region marker lines never show), or for
// an excerpt hold only lines of it, in its order (long outputs are shown in part).
// `node scripts/docs-examples.mjs` (npm run docs:examples) checks and exits 1 on any drift, a block
// without a marker, or a marker naming nothing; with --write it rewrites the blocks from their sources.
// Also exported for the test suite: checkDocs(), quotedFiles().
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MARKER = /^<!-- example: (examples\/[^\s#]+)(?:#([\w-]+))?( excerpt)? -->$/;
const FENCE = /^(\s*)(`{3,}|~{3,})/;

/** README.md and every docs/*.md page. */
export function documents() {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join('docs', f));
  return ['README.md', ...docs];
}

/** The text a marker quotes: the whole file, or a region of it, without region marker lines. */
export function source(file, region) {
  const path = join(ROOT, file);
  if (!existsSync(path)) throw new Error(`${file} does not exist`);
  let lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
  if (region) {
    const start = lines.findIndex((l) => l.trim().endsWith(`#region ${region}`));
    const end = lines.findIndex((l, i) => i > start && l.trim().endsWith(`#endregion ${region}`));
    if (start < 0 || end < 0) throw new Error(`${file} has no region ${region} (#region ${region} ... #endregion ${region})`);
    lines = lines.slice(start + 1, end);
    const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
    lines = lines.map((l) => l.slice(indent));
  }
  return lines.filter((l) => !/#(end)?region\b/.test(l)).join('\n');
}

/** Every fenced block of a Markdown text: its marker (if any), its content and where it sits. */
function blocks(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence] = open;
    let close = i + 1;
    while (close < lines.length && lines[close].trim() !== fence) close++;
    const marker = MARKER.exec((lines[i - 1] ?? '').trim());
    found.push({
      line: i + 1,
      indent,
      open: i,
      close,
      file: marker?.[1],
      region: marker?.[2],
      excerpt: Boolean(marker?.[3]),
      content: lines.slice(i + 1, close).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n'),
    });
    i = close;
  }
  return { lines, found };
}

/** The first line of an excerpt that is not in the source after the previous one; undefined when all are. */
function excerptStray(content, source) {
  const lines = source.split('\n');
  let at = 0;
  for (const line of content.split('\n')) {
    if (line.trim() === '...') continue;
    const found = lines.indexOf(line, at);
    if (found < 0) return line;
    at = found + 1;
  }
  return undefined;
}

/** Problems in every document (empty when the docs quote their examples exactly). With write, fixes drift. */
export function checkDocs({ write = false } = {}) {
  const problems = [];
  for (const doc of documents()) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const { lines, found } = blocks(text);
    let changed = false;
    const here = [];
    // Last block first, so a rewrite does not move the lines of the blocks still to come.
    for (const block of [...found].reverse()) {
      const where = `${doc}:${block.line}`;
      if (!block.file) {
        here.push(`${where}: a code block without an <!-- example: examples/... --> marker above it (every example must be a file under examples/ that CI runs)`);
        continue;
      }
      let expected;
      try {
        expected = source(block.file, block.region);
      } catch (error) {
        here.push(`${where}: ${error.message}`);
        continue;
      }
      if (expected === block.content) continue;
      if (block.excerpt) {
        const stray = excerptStray(block.content, expected);
        if (stray === undefined) continue;
        here.push(`${where}: shows a line ${block.file} does not have (in that order): ${stray}`);
        continue;
      }
      if (write) {
        lines.splice(block.open + 1, block.close - block.open - 1, ...expected.split('\n').map((l) => (l ? block.indent + l : l)));
        changed = true;
      } else {
        here.push(`${where}: differs from ${block.file}${block.region ? `#${block.region}` : ''} (run npm run docs:examples -- --write)`);
      }
    }
    problems.push(...here.reverse());
    if (changed) writeFileSync(join(ROOT, doc), lines.join('\n'));
  }
  return problems;
}

/** The example files (and regions) the documents quote. */
export function quotedFiles() {
  return documents().flatMap((doc) => blocks(readFileSync(join(ROOT, doc), 'utf8')).found.filter((b) => b.file).map((b) => b.file));
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const write = process.argv.includes('--write');
  const problems = checkDocs({ write });
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log(`docs:examples: every code block in ${documents().length} documents quotes its file under examples/${write ? ' (written)' : ''}`);
}
