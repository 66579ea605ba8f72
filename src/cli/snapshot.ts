// Owns `billing-sandbox snapshot save|restore|export|import|list|delete`: the partner's account
// snapshots, through /_sandbox/snapshots. `export` writes the document (secrets redacted) to a file or
// stdout; `import` sends one back, from this sandbox or another.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';

interface SnapshotSummary {
  name: string;
  account: string;
  environment: string;
  created_at: string;
  counts: Record<string, number>;
  bytes: number;
  redacted: boolean;
}

const objects = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} kB`);
const path = (name: string) => `/snapshots/${encodeURIComponent(name)}`;

export function snapshotCommand(): Command {
  const snapshot = new Command('snapshot').description('save the account as a named snapshot, restore it before each test, export and import snapshots');
  snapshot.addCommand(withClientOptions(new Command('save'))
    .description('save the account (objects, history, clock, webhook queue, scenarios, idempotency keys, counters) as a snapshot')
    .argument('<name>', 'letters, digits, dots, dashes or underscores (at most 64)')
    .addOption(new Option('--replace', 'overwrite a snapshot of the same name'))
    .action(clientAction(async ({ client, out }, name: string, flags: { replace?: boolean }) => {
      const saved = await out.wait(`Saving ${name}`, client.control<SnapshotSummary>('POST', '/snapshots', { body: { name, replace: Boolean(flags.replace) } }));
      if (out.json) return out.data(saved);
      out.line(`Saved ${out.colors.bold(name)}: ${objects(saved.counts)} objects, ${size(saved.bytes)}.`);
    })));
  snapshot.addCommand(withClientOptions(new Command('restore'))
    .description('replace the account with a snapshot (or, with --environment, the partner\'s account in that environment)')
    .argument('<name>')
    .addOption(new Option('--environment <environment>', 'restore into the partner\'s account in this environment').choices(['production', 'demo']))
    .action(clientAction(async ({ client, out }, name: string, flags: { environment?: string }) => {
      const body = flags.environment ? { environment: flags.environment } : {};
      const restored = await out.wait(`Restoring ${name}`, client.control<{ name: string; account: string; counts: Record<string, number> }>('POST', `${path(name)}/restore`, { body }));
      if (out.json) return out.data(restored);
      out.line(`Restored ${out.colors.bold(name)} into ${restored.account}: ${objects(restored.counts)} objects.`);
    })));
  snapshot.addCommand(withClientOptions(new Command('export'))
    .description('write a snapshot as a JSON document (secrets redacted) that `snapshot import` and --fixtures read')
    .argument('<name>')
    .addOption(new Option('-o, --output <file>', 'write it to this file instead of stdout'))
    .action(clientAction(async ({ client, out }, name: string, flags: { output?: string }) => {
      const document = await out.wait(`Exporting ${name}`, client.control<Record<string, unknown>>('GET', path(name)));
      if (!flags.output) return out.data(document);
      const file = resolve(flags.output);
      writeFileSync(file, `${JSON.stringify(document)}\n`);
      if (out.json) return out.data({ name, file });
      out.line(`Exported ${out.colors.bold(name)} to ${file}.`);
    })));
  snapshot.addCommand(withClientOptions(new Command('import'))
    .description('keep an exported document as a snapshot of the partner (its secrets stay redacted)')
    .argument('<file>', 'a document written by `snapshot export`')
    .addOption(new Option('--name <name>', 'keep it under this name instead of the document\'s'))
    .addOption(new Option('--replace', 'overwrite a snapshot of the same name'))
    .action(clientAction(async ({ client, out }, arg: string, flags: { name?: string; replace?: boolean }) => {
      const file = resolve(arg);
      if (!existsSync(file)) throw usageError(`no file ${arg}`);
      let document: unknown;
      try {
        document = JSON.parse(readFileSync(file, 'utf8'));
      } catch (error) {
        throw usageError(`${arg} is not JSON: ${(error as Error).message}`);
      }
      const body = { document, ...(flags.name ? { name: flags.name } : {}), replace: Boolean(flags.replace) };
      const saved = await out.wait(`Importing ${arg}`, client.control<SnapshotSummary>('POST', '/snapshots', { body }));
      if (out.json) return out.data(saved);
      out.line(`Imported ${out.colors.bold(saved.name)}: ${objects(saved.counts)} objects, ${size(saved.bytes)}.`);
    })));
  snapshot.addCommand(withClientOptions(new Command('list'))
    .description('list the partner\'s snapshots')
    .action(clientAction(async ({ client, out }) => {
      const { data } = await out.wait('Listing snapshots', client.control<{ data: SnapshotSummary[] }>('GET', '/snapshots'));
      if (out.json) return out.data({ data });
      if (!data.length) return out.line('No snapshots. Save one with `billing-sandbox snapshot save NAME`.');
      out.table(['NAME', 'FROM', 'CREATED AT', 'OBJECTS', 'SIZE'], data.map((s) => [{ text: s.name, paint: 'bold' as const }, `${s.account}${s.redacted ? ' (imported)' : ''}`, s.created_at, String(objects(s.counts)), size(s.bytes)]));
    })));
  snapshot.addCommand(withClientOptions(new Command('delete'))
    .description('delete one of the partner\'s snapshots')
    .argument('<name>')
    .action(clientAction(async ({ client, out }, name: string) => {
      const answer = await out.wait(`Deleting ${name}`, client.control<{ deleted: number }>('DELETE', path(name)));
      if (out.json) return out.data(answer);
      out.line(`Deleted ${name}.`);
    })));
  return snapshot;
}
