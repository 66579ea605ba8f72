// Owns `billing-sandbox scenario load FILE|NAME`, `scenario list` and `scenario clear`: scenario
// documents of the account, through /_sandbox/scenarios. The sandbox checks every document; the CLI
// only finds it (a file, else a scenario shipped in the package's scenarios/ folder) and sends it as is.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { didYouMean } from '../suggest.js';
import { clientAction, withClientOptions } from './client.js';
import { usageError } from './errors.js';

/** The package's shipped scenarios (dist/cli/ and src/cli/ both sit two levels below the package root). */
const SHIPPED_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));
const EXTENSIONS = ['.json', '.yaml', '.yml'];

export function shippedScenarios(): string[] {
  if (!existsSync(SHIPPED_DIR)) return [];
  return readdirSync(SHIPPED_DIR).filter((f) => EXTENSIONS.includes(extname(f))).map((f) => basename(f, extname(f))).sort();
}

/** A file path, else a shipped name; its text and the content type to send it as. */
function findDocument(arg: string, cwd = process.cwd()): { source: string; text: string; contentType: string } {
  const candidates = [resolve(cwd, arg), ...(/[\\/]/.test(arg) ? [] : EXTENSIONS.map((ext) => `${SHIPPED_DIR}${arg}${ext}`))];
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    const shipped = shippedScenarios();
    throw usageError(`no file ${arg}, and no shipped scenario of that name${didYouMean(arg, shipped)} (shipped: ${shipped.join(', ')})`);
  }
  const text = readFileSync(found, 'utf8');
  return { source: found, text, contentType: /\.json$/i.test(found) || /^\s*[{[]/.test(text) ? 'application/json' : 'application/yaml' };
}

interface ScenarioSummary {
  id: string;
  name: string;
  description?: string;
  scope: string;
  rules_count: number;
  loaded_at: string;
}

export function scenarioCommand(): Command {
  const scenario = new Command('scenario').description('load, list and clear the account\'s scenario documents (fault injection)');
  scenario.addCommand(withClientOptions(new Command('load'))
    .description('load a scenario document for the account: a JSON or YAML file, or the name of a shipped one')
    .argument('<file|name>', `a file, or one of: ${shippedScenarios().join(', ')}`)
    .action(clientAction(async ({ client, out }, arg: string) => {
      const document = findDocument(arg);
      const { id } = await out.wait(`Loading ${arg}`, client.control<{ id: string }>('POST', '/scenarios', { body: document.text, contentType: document.contentType }));
      if (out.json) return out.data({ id, source: document.source });
      out.line(`Loaded ${out.colors.bold(arg)} as ${id}`);
    })));
  scenario.addCommand(withClientOptions(new Command('list'))
    .description('list the scenarios in force for the account, and the shipped ones you can load by name')
    .action(clientAction(async ({ client, out }) => {
      const { data } = await out.wait('Listing scenarios', client.control<{ data: ScenarioSummary[] }>('GET', '/scenarios'));
      const shipped = shippedScenarios();
      if (out.json) return out.data({ data, shipped });
      if (data.length) {
        out.table(['ID', 'NAME', 'SCOPE', 'RULES', 'LOADED AT'], data.map((s) => [{ text: s.id, paint: 'dim' }, s.name, s.scope, String(s.rules_count), s.loaded_at]));
      } else {
        out.line('No scenarios in force for this account.');
      }
      out.note(`Shipped (load by name): ${shipped.join(', ')}`);
    })));
  scenario.addCommand(withClientOptions(new Command('clear'))
    .description('remove every scenario loaded for the account (global --scenario ones stay)')
    .action(clientAction(async ({ client, out }) => {
      const answer = await out.wait('Clearing scenarios', client.control<{ deleted: number }>('DELETE', '/scenarios'));
      if (out.json) return out.data(answer);
      out.line(`Removed ${answer.deleted} scenario${answer.deleted === 1 ? '' : 's'}.`);
    })));
  return scenario;
}
