// Owns starting the built CLI as a child process for the long-running harnesses (soak,
// webhook-chaos): a free loopback port, the spawn, and the wait until /_sandbox/health answers.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A loopback port that was free a moment ago. */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Start `node dist/cli.js --port <port> ...args` and resolve once its health check answers (20 s at
 * most). `cli`: another build's cli.js (to compare); `nodeArgs`: node's own flags (a heap limit).
 */
export async function startCli(port, args, { cli = CLI, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, cli, '--port', String(port), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/_sandbox/health`)).ok) return child;
    } catch { /* not listening yet */ }
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`the sandbox did not start on port ${port}`);
}
