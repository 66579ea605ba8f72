// Owns the blocks of the docs that a script writes, never a person: the latest bench table in
// docs/performance.md (`npm run bench -- --markdown`) and the mutation scores in docs/contributing.md
// (`npm run mutate:files`). A block sits between two marker lines,
//
//   <!-- generated: NAME by COMMAND; edit the script, not this block -->
//   ...
//   <!-- /generated: NAME -->
//
// and replaceBlock() swaps what lies between them, leaving the rest of the page as it is.
import { readFileSync, writeFileSync } from 'node:fs';

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The text between the markers of block `name`, or undefined when the page has none. */
export function readBlock(text, name) {
  const found = new RegExp(`^<!-- generated: ${escape(name)} [^\\n]*-->\\n([\\s\\S]*?)^<!-- /generated: ${escape(name)} -->$`, 'm').exec(text);
  return found?.[1].replace(/\n$/, '');
}

/** `text` with block `name` holding `body`; throws when the page has no such block (or two). */
export function replaceBlock(text, name, body) {
  const open = new RegExp(`^<!-- generated: ${escape(name)} [^\\n]*-->$`, 'gm');
  const close = new RegExp(`^<!-- /generated: ${escape(name)} -->$`, 'gm');
  const opens = [...text.matchAll(open)];
  const closes = [...text.matchAll(close)];
  if (opens.length !== 1 || closes.length !== 1 || closes[0].index < opens[0].index) {
    throw new Error(`expected one block "${name}" (<!-- generated: ${name} ... --> ... <!-- /generated: ${name} -->), found ${opens.length} start and ${closes.length} end markers`);
  }
  const start = opens[0].index + opens[0][0].length + 1;
  return `${text.slice(0, start)}${body.replace(/^\n+/, '').replace(/\n*$/, '\n')}${text.slice(closes[0].index)}`;
}

/** Rewrite block `name` of the file at `path`. */
export function writeBlock(path, name, body) {
  writeFileSync(path, replaceBlock(readFileSync(path, 'utf8'), name, body));
}
