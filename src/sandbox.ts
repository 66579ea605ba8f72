// Owns startSandbox() for test runners and the command line: a listening sandbox with typed helpers
// for tokens, the clock, scenarios and reset. The public API (src/index.ts) re-exports it.
import type { Server } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { AddressInfo } from 'node:net';
import { createApp, createDeps, createSandboxServer, type DepsOverrides, type SandboxApp } from './app.js';
import { defaultConfig, type DefaultCredentials, type Environment, type SandboxConfig } from './config.js';
import { howToSet } from './settings.js';
import type { Deps } from './deps.js';
import { didYouMean } from './suggest.js';
import { tokenRequestInit } from './auth/tokens.js';
import { STREAM_SERVICE } from './stream/feature.js';
import { answerClientErrors } from './http/client-error.js';
import { openConnection, readErrorBody, SandboxRequestError, type SandboxConnection } from './client/index.js';
import type { ScenarioDocument } from './scenarios/document.js';


export interface SandboxOptions extends Partial<SandboxConfig> {
  overrides?: DepsOverrides;
}

/** Which account a helper acts on: an access token's account, or the default partner's account in an environment. */
export interface AccountSelector {
  /** An API access token; the helper acts on its account. */
  token?: string;
  /** Without a token: the default partner's account in this environment (default production). */
  environment?: Environment;
}

export type { ScenarioDocument, ScenarioRule } from './scenarios/document.js';

export { SandboxRequestError, type SandboxErrorBody } from './client/index.js';

/**
 * A sandbox listening in this process. It is a SandboxConnection for the default partner's production
 * key (`api`, `control`, `partner()`, as connect() and the Testcontainers module give), with the
 * process-side handles (`deps`, `app`, `close()`) and account-selecting helpers.
 */
export interface RunningSandbox extends SandboxConnection {
  /** Base URL of the production API, e.g. http://127.0.0.1:54321 (the demo API is under `${url}/demo`). */
  url: string;
  port: number;
  /** The default partner's credentials in each environment. */
  credentials: DefaultCredentials;
  deps: Deps;
  app: SandboxApp;
  /** A fresh access token for the default partner in an environment (default production); `api` keeps its own. */
  token(environment?: Environment): Promise<string>;
  /** Stop listening, finish in-flight requests and due work, and flush the data file. Safe to call twice. */
  close(): Promise<void>;
  /** Without a selector: everything back to the start state. With one: that account back to empty. */
  reset(account?: AccountSelector): Promise<void>;
  /** Move an account's clock forward (default: the default production account), running what falls due; resolves to the new now. */
  advanceClock(seconds: number, account?: AccountSelector): Promise<string>;
  /** Load a scenario document (an object, or JSON/YAML text) for an account; resolves to its id. */
  loadScenario(document: ScenarioDocument | string, account?: AccountSelector): Promise<{ id: string }>;
  /** Remove every scenario loaded for an account through the control plane; resolves to how many. */
  clearScenarios(account?: AccountSelector): Promise<number>;
  /**
   * Save an account (default: the default production account) as a snapshot of its partner, replacing
   * one of that name; resolves to its size and object counts.
   */
  saveSnapshot(name: string, account?: AccountSelector): Promise<{ bytes: number; counts: Record<string, number> }>;
  /** Restore one of the partner's snapshots into an account (default: the default production account). */
  restoreSnapshot(name: string, account?: AccountSelector): Promise<void>;
}

/** Every option startSandbox() knows: the config's fields and `overrides`. */
const KNOWN_OPTIONS: readonly string[] = [...Object.keys(defaultConfig({})), 'overrides'];

/**
 * Refuse options startSandbox() does not know, naming each with the nearest valid one: a misspelt
 * option (`{ data: 'x.json' }` for `dataFile`) would otherwise be ignored and, say, nothing persisted.
 */
function checkOptions(options: object): void {
  const unknown = Object.keys(options).filter((name) => !KNOWN_OPTIONS.includes(name));
  if (unknown.length) {
    throw new TypeError(`${unknown.map((name) => `unknown option ${name}${didYouMean(name, KNOWN_OPTIONS)}`).join('; ')} (startSandbox options: ${KNOWN_OPTIONS.join(', ')})`);
  }
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  checkOptions(options);
  const { overrides, ...config } = options;
  // The log level and the rest come from config.ts under the options (a library's defaults: warn).
  const deps = await createDeps({ realTimeTicks: true, ...config }, overrides);
  const app = createApp(deps);
  const bindHost = config.host ?? '127.0.0.1';
  // Not app.listen: express 5 hands a listen error to its callback, which would look like success.
  const server: Server = createSandboxServer(app);
  answerClientErrors(server, deps.log);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port ?? 0, bindHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await deps.store.close();
    throw error;
  }
  if (!deps.config.adminToken && !isLoopback(bindHost)) {
    deps.log.warn({ host: bindHost }, `listening on ${bindHost} without an admin token: anyone who can reach this address can use the control plane (reset, create partners, manage the default partner's keys). Set one with ${howToSet('adminToken', 'TOKEN')} when others share the network.`);
  }
  if (deps.config.realTimeTicks) deps.scheduler.startTicking();
  const { port } = server.address() as AddressInfo;
  const host = bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost === '::' ? '::1' : bindHost;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const prefix = (environment: Environment) => (environment === 'demo' ? '/demo' : '');

  const token = async (environment: Environment = 'production'): Promise<string> => {
    const { client_id, client_secret } = deps.config.credentials[environment];
    const res = await fetch(`${url}${prefix(environment)}/oauth/token`, tokenRequestInit(client_id, client_secret));
    const body = await readErrorBody(res);
    if (!res.ok) throw new SandboxRequestError(res.status, body, 'POST /oauth/token');
    return (body as { access_token: string }).access_token;
  };

  /** A control-plane call, acting on the selected account (no selector: the default production account). */
  const controlCall = async (method: string, path: string, account: AccountSelector | undefined, body?: unknown) => {
    const headers: Record<string, string> = {};
    if (deps.config.adminToken) headers['X-Sandbox-Admin-Token'] = deps.config.adminToken;
    const accessToken = account?.token ?? (account?.environment ? await token(account.environment) : undefined);
    if (accessToken) headers.Authorization = `Bearer ${accessToken}`;
    if (typeof body === 'string') headers['Content-Type'] = /^\s*[{[]/.test(body) ? 'application/json' : 'application/yaml';
    else if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const answer = await readErrorBody(res);
    if (!res.ok) throw new SandboxRequestError(res.status, answer, `${method} ${path}`);
    return answer as Record<string, unknown>;
  };

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= (async () => {
      deps.scheduler.stopTicking();
      // Live streams never end by themselves: end them first, or server.close() would wait for ever.
      deps.services.get(STREAM_SERVICE)?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.scheduler.idle();
      deps.services.closeAll();
      await deps.store.close();
      await deps.blobs.close();
    })());
  const connection = openConnection({
    origin: url,
    environment: 'production',
    credentials: deps.config.credentials.production,
    adminToken: deps.config.adminToken || undefined,
    fetch: (input, init) => fetch(input, init),
    close,
  });
  return {
    ...connection,
    url,
    port,
    credentials: deps.config.credentials,
    deps,
    app,
    token,
    close,
    // Through the control plane, so the helpers do exactly what a partner's HTTP calls would do.
    reset: async (account) => {
      await controlCall('POST', '/_sandbox/reset', account);
    },
    advanceClock: async (seconds, account) => {
      const answer = await controlCall('POST', '/_sandbox/clock/advance', account, { seconds });
      return answer.now as string;
    },
    loadScenario: async (document, account) => {
      const answer = await controlCall('POST', '/_sandbox/scenarios', account, document);
      return { id: answer.id as string };
    },
    clearScenarios: async (account) => {
      const answer = await controlCall('DELETE', '/_sandbox/scenarios', account);
      return answer.deleted as number;
    },
    saveSnapshot: async (name, account) => {
      const answer = await controlCall('POST', '/_sandbox/snapshots', account, { name, replace: true });
      return { bytes: answer.bytes as number, counts: answer.counts as Record<string, number> };
    },
    restoreSnapshot: async (name, account) => {
      await controlCall('POST', `/_sandbox/snapshots/${encodeURIComponent(name)}/restore`, account);
    },
  };
}

/** The bind address reaches only this machine: a loopback IP (127.0.0.0/8, ::1) or localhost. */
function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  try {
    const address = ipaddr.process(host.replace(/^\[|\]$/g, ''));
    return address.range() === 'loopback';
  } catch {
    return false;
  }
}
