// The docs as a partner reads them: the README is an entrance of at most 10 KB, every other page at
// most 300 lines, every page one click from the README and back, every link between pages and every
// anchor resolves (GitHub's heading slugs), and no page but CHANGELOG.md names a commit, a time of day
// or an issue number (history lives in the changelog; a figure is given as it stands now, with the
// command to measure it again). Also the generated blocks the bench and the mutation script write.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { readBlock, replaceBlock } from '../scripts/lib/generated-block.mjs';

const ROOT = join(new URL('.', import.meta.url).pathname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
/** Every page a reader moves between: the README, the docs, the changelog and the examples' index. */
const PAGES = ['README.md', ...DOCS, 'CHANGELOG.md', 'examples/README.md'];
/** Pages that must say what is true now (the changelog is the one place for history). */
const CURRENT = PAGES.filter((page) => page !== 'CHANGELOG.md');

/** The text without fenced code blocks and inline code spans (line breaks kept, so line numbers hold). */
function prose(text: string): string {
  return withoutFences(text).replace(/(`+)[^`\n][\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

/** The text without fenced code blocks (line breaks kept). */
function withoutFences(text: string): string {
  return text.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The before-stop hook's own check, word for word: it runs over the whole text, code included. */
const HOOK = /\b(since|commit|at|run of|on) [0-9a-f]{7}\b|\b20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}\b/;
const RULES: Array<[string, RegExp, 'text' | 'prose']> = [
  ['the before-stop hook\'s pattern', HOOK, 'text'],
  ['a commit named as one', /\b(?:commits?|revision|sha)\s+`?[0-9a-f]{7,40}\b/i, 'prose'],
  // A hash after a word that dates a run ("since 0588e24", "the code of 9911be6"): letters and digits both.
  ['a commit id', /\b(?:since|at|on|of|in|before|after|from|as at)\s+`?(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/i, 'prose'],
  ['a date with a time of day', /\b20\d\d-\d\d-\d\d(?:T|,? (?:at )?)\d{1,2}:\d\d\b|\b\d{1,2}:\d\d(?::\d\d)?,? (?:on |of )?(?:\w+ )?20\d\d-\d\d-\d\d\b/, 'prose'],
  ['an issue number', /\b(?:issues?|pull requests?|PR)\s+#?\d+\b/i, 'prose'],
];

/** What a page names that belongs in the changelog: one line per finding. */
function historyIn(text: string): string[] {
  const found: string[] = [];
  const texts = { text, prose: prose(text) };
  for (const [what, pattern, where] of RULES) {
    texts[where].split('\n').forEach((line, i) => {
      const hit = pattern.exec(line);
      if (hit) found.push(`line ${i + 1}: ${what}: ${hit[0]}`);
    });
  }
  return found;
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '');
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors a page offers: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of withoutFences(text).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n ? `${base}-${n}` : base);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]);
  return found;
}

/** Relative links of a page (code excluded): the target path from the repository root, and its fragment. */
function links(page: string): Array<{ line: number; target: string; path: string; fragment?: string }> {
  const out: Array<{ line: number; target: string; path: string; fragment?: string }> = [];
  prose(read(page)).split('\n').forEach((text, i) => {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, fragment] = target.split('#');
      out.push({ line: i + 1, target, path: path ? normalize(join(dirname(page), path)) : page, fragment });
    }
  });
  return out;
}

describe('the detectors', () => {
  it.each([
    'Last run, 2026-11-27 20:05 on a 2-core machine',
    '(commit 4a93745, Node 22.23)',
    'since 0588e24 the bench pairs the rows',
    'the code of 9911be6',
    'at 09:13 on 2026-11-27 the GETs ran slow',
    'measured 2026-11-27T11:31 on the second machine',
    'the unit of work of issue 18',
    'see issues #41 and #42',
    'POST --data CPU/req at 1000000 / at 1000',
    'a commit 30f06a6c8e2b1d0f4a5b6c7d8e9f0a1b2c3d4e5f',
  ])('find %j', (line) => {
    expect(historyIn(line)).not.toEqual([]);
  });

  it.each([
    'US bank `account_number` `000111111116` (any routing number)',
    'ids `prefix_` plus 20 hex characters, `inv_876bece239527173f971`',
    'POST --data CPU/req at 1,000,000 / at 1,000',
    'the clock stops at 9999-12-31T23:59:59Z',
    '```text\nClock now 2026-12-24T19:32:32.478Z  (real time + 31d)\n```',
    'a fuzz run of seed 20260302, a page of 500 items',
    'one access line at 10:42 each (a log format), dated 2026-11-27',
    'decaded, accede and effaced are words of hex letters',
  ])('leave %j', (line) => {
    expect(historyIn(line)).toEqual([]);
  });

  it.each([
    ['The data file (`--data`): what a crash keeps', 'the-data-file---data-what-a-crash-keeps'],
    ['Limits and retention', 'limits-and-retention'],
    ['The 18 topics and their data', 'the-18-topics-and-their-data'],
    ['Side by side: `npm run bench`', 'side-by-side-npm-run-bench'],
    ['POST /webhooks/retry', 'post-webhooksretry'],
    ['Web inspector: which_accounts', 'web-inspector-which_accounts'],
    ['A [linked](x.md) heading', 'a-linked-heading'],
  ])('slug %j is %j', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers a repeated heading as GitHub does, and ignores headings in code', () => {
    expect([...anchors('# A\n## B\n## B\n```md\n## C\n```\n<a id="x"></a>')]).toEqual(['a', 'b', 'b-1', 'x']);
  });
});

describe('the pages', () => {
  it('name no commit, time of day or issue number outside CHANGELOG.md (history lives there)', () => {
    const found = CURRENT.flatMap((page) => historyIn(read(page)).map((f) => `${page} ${f}`));
    expect(found).toEqual([]);
  });

  it('the README is an entrance: at most 10 KB', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(10 * 1024);
  });

  it('every other page is at most 300 lines', () => {
    const long = PAGES.filter((page) => page !== 'README.md').map((page) => [page, read(page).split('\n').length - 1] as const).filter(([, lines]) => lines > 300);
    expect(long).toEqual([]);
  });

  it('every page is one click from the README, and links back to it', () => {
    const fromReadme = new Set(links('README.md').map((l) => l.path));
    expect(PAGES.filter((page) => page !== 'README.md' && !fromReadme.has(page))).toEqual([]);
    const noWayBack = PAGES.filter((page) => page !== 'README.md' && !links(page).some((l) => l.path === 'README.md'));
    expect(noWayBack).toEqual([]);
  });

  it('every relative link names a file that exists, and every anchor a heading of its page', () => {
    const anchorsOf = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of links(page)) {
        const where = `${page}:${link.line} (${link.target})`;
        if (relative(ROOT, join(ROOT, link.path)).startsWith('..') || !existsSync(join(ROOT, link.path))) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (!link.fragment) continue;
        if (!link.path.endsWith('.md')) {
          broken.push(`${where}: an anchor into a file that is not a page`);
          continue;
        }
        if (!anchorsOf.has(link.path)) anchorsOf.set(link.path, anchors(read(link.path)));
        if (!anchorsOf.get(link.path)?.has(link.fragment)) broken.push(`${where}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('gaps-and-choices holds one short row per decision (about 400 characters at most)', () => {
    const rows = read('docs/gaps-and-choices.md').split('\n').filter((line) => line.startsWith('| '));
    expect(rows.length).toBeGreaterThan(150);
    expect(rows.filter((row) => row.length > 450).map((row) => row.slice(0, 60))).toEqual([]);
  });
});

describe('the generated blocks', () => {
  it('docs/performance.md holds the bench\'s block and docs/contributing.md the mutation script\'s', () => {
    expect(readBlock(read('docs/performance.md'), 'bench')).toMatch(/^\| target \| GET \/customers\/\{id\} req\/s/);
    expect(readBlock(read('docs/performance.md'), 'bench')).toContain('| measure | value | goal | verdict |');
    expect(readBlock(read('docs/contributing.md'), 'mutation')).toMatch(/^\| file \| blob \| mutants \| detected \| survived \| not covered \| score \|\n/);
  });

  it('a rewrite replaces only what lies between the markers, and refuses a page without them', () => {
    const page = 'a\n<!-- generated: bench by `npm run bench -- --markdown` -->\nold\nrows\n<!-- /generated: bench -->\nz\n';
    const written = replaceBlock(page, 'bench', '| new |\n');
    expect(written).toBe('a\n<!-- generated: bench by `npm run bench -- --markdown` -->\n| new |\n<!-- /generated: bench -->\nz\n');
    expect(readBlock(written, 'bench')).toBe('| new |');
    expect(replaceBlock(written, 'bench', '| new |')).toBe(written);
    expect(() => replaceBlock('a\nz\n', 'bench', 'x')).toThrow(/expected one block "bench"/);
    expect(() => replaceBlock(`${page}${page}`, 'bench', 'x')).toThrow(/found 2 start and 2 end markers/);
  });
});
