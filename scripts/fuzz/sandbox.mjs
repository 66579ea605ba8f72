// Owns the sandbox a fuzzer runs against: in this process, on a loopback port, answers checked
// against the documents, real time frozen, no outbound network, every error it logs collected.
// `config` adds to its configuration (the hostile-document phase gives it a data file).
import { Writable } from 'node:stream';
import pino from 'pino';
import { guardNetwork } from './client.mjs';

const START = Date.parse('2026-03-02T09:00:00.000Z');

/** Start an in-process sandbox for fuzzing: frozen real time, no outbound network, errors collected. */
export async function startFuzzSandbox(sandbox, config = {}) {
  const unguard = guardNetwork();
  const loggedErrors = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      try {
        const line = JSON.parse(chunk.toString());
        loggedErrors.push(`${line.msg}: ${line.err?.message ?? ''} ${line.err?.stack?.split('\n')[1]?.trim() ?? ''}`.trim());
      } catch { loggedErrors.push(chunk.toString().slice(0, 300)); }
      done();
    },
  });
  const time = { now: START };
  const running = await sandbox.startSandbox({
    port: 0,
    rateLimit: 0,
    validateResponses: true,
    realTimeTicks: false,
    logLevel: 'error',
    seed: 'fuzz',
    ...config,
    overrides: { realNow: () => time.now, logger: pino({ level: 'error' }, sink) },
  }).catch((error) => { unguard(); throw error; });
  // No generated url may reach the network: every name resolves to nothing and no address is allowed.
  running.deps.services.set('pdf.fetchOptions', { resolve: async () => [], policy: () => 'is not reachable from the fuzzer' });
  // Scenario delays do not sleep.
  running.deps.services.set('scenarioSleep', async () => undefined);
  // Webhook attempts give up at once (the guard refuses them anyway).
  const queue = running.deps.services.get('webhooks');
  if (queue?.options) queue.options.timeoutMs = 2_000;
  return { running, loggedErrors, time, unguard };
}

