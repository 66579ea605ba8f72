// Used by the Dockerfile: deletes, under each folder named, what the image never runs: TypeScript
// declarations, source maps, Markdown docs, and @types packages. Licence and notice files stay.
// Node rather than find(1): the image's base may be as small as node, npm, sh and tar.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const DROP = /\.(d\.[mc]?ts|map|md|markdown)$/i;
const KEEP = /^(licen[cs]e|notice)/i;

function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === '@types') rmSync(path, { recursive: true, force: true });
      else prune(path);
    } else if (DROP.test(entry.name) && !KEEP.test(entry.name)) {
      rmSync(path, { force: true });
    }
  }
}

for (const dir of process.argv.slice(2)) prune(dir);
