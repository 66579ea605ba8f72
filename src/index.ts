// Owns the public, programmatic API: startSandbox() for test runners, and createApp/createDeps.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, createDeps, type DepsOverrides, type SandboxApp } from './app.js';
import type { SandboxConfig } from './config.js';
import type { Deps } from './deps.js';

export { createApp, createDeps, FEATURES } from './app.js';
export type { SandboxConfig } from './config.js';
export type { Deps } from './deps.js';

export interface SandboxOptions extends Partial<SandboxConfig> {
  overrides?: DepsOverrides;
}

export interface RunningSandbox {
  url: string;
  port: number;
  deps: Deps;
  app: SandboxApp;
  /** Stop listening, finish in-flight requests and due work, and flush the data file. */
  close(): Promise<void>;
  /** Every account back to its start state (the default partner only). */
  reset(): void;
  /** Move the default production account's clock forward, running what falls due. */
  advanceClock(seconds: number, account?: { partnerId: string; environment: 'production' | 'demo' }): Promise<string>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const { overrides, ...config } = options;
  const deps = await createDeps({ realTimeTicks: true, ...config }, overrides);
  const app = createApp(deps);
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.port ?? 0, config.host ?? '127.0.0.1', () => resolve(listening));
    listening.once('error', reject);
  });
  if (deps.config.realTimeTicks) deps.scheduler.startTicking();
  const { port } = server.address() as AddressInfo;
  const host = (config.host ?? '127.0.0.1') === '0.0.0.0' ? '127.0.0.1' : config.host ?? '127.0.0.1';
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    deps,
    app,
    close: () => (closing ??= (async () => {
      deps.scheduler.stopTicking();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.scheduler.idle();
      for (const close of deps.services.values()) await (close as { close?: () => Promise<void> })?.close?.();
      await deps.store.close();
    })()),
    reset: () => {
      deps.store.resetAll();
      deps.partners.ensureDefault(deps.config.credentials);
      deps.rateLimiter.reset();
    },
    advanceClock: async (seconds, account = { partnerId: 'ptn_default', environment: 'production' }) => {
      const target = deps.store.account(account.partnerId, account.environment);
      await deps.scheduler.advance(target, target.clock.nowMs() + seconds * 1000);
      return target.clock.iso();
    },
  };
}
