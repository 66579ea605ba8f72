#!/usr/bin/env node
// npm run slow-clients: clients that ask for big answers and never read them, against the built CLI
// (`node dist/cli.js --rate-limit 0`). The request journal of the default account is filled first, so
// that each `GET /_sandbox/requests?limit=500` answers about 4 MB; then --sockets raw connections each
// send that request (--pipeline of them at once) and never read (the socket paused). Meanwhile the
// server's resident memory is sampled, /_sandbox/health is timed one call after another, and the
// server's open descriptors are counted. After --hold seconds every socket reads what it was sent:
// one the server dropped ends short of its answers; one whose answers the kernel took whole (a
// loopback socket holds a few MB) reads them all, the server having closed it once idle.
// Goals: the server lives, its peak RSS stays under --rss-mb, every health check is answered within
// --health-ms, and by the end of the hold the server holds none of the connections (each dropped, or
// closed idle). The burst's own work is done in arrival order, so a health check sent behind it waits
// for it: the summary gives the server's CPU seconds for that.
// Flags: --sockets N (300), --pipeline N (1), --limit N (500), --hold SECONDS (40: past the 30 s send
// time-out), --health-ms MS (30000), --rss-mb MB (1024), --heap-mb MB (node's --max-old-space-size
// for the server; absent: node's default, which lets garbage grow to gigabytes before collecting it),
// --cli PATH (another build's dist/cli.js, to compare). One summary line; exit 1 on a missed goal.
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { freePort, startCli } from './harness/cli-process.mjs';

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '300' },
    limit: { type: 'string', default: '500' },
    hold: { type: 'string', default: '40' },
    'health-ms': { type: 'string', default: '30000' },
    'rss-mb': { type: 'string', default: '1024' },
    pipeline: { type: 'string', default: '1' },
    cli: { type: 'string' },
    'heap-mb': { type: 'string' },
  },
});
const SOCKETS = Number(values.sockets);
const LIMIT = Number(values.limit);
const HOLD_MS = Number(values.hold) * 1000;
const HEALTH_GOAL_MS = Number(values['health-ms']);
const RSS_GOAL_MB = Number(values['rss-mb']);
const PIPELINE = Number(values.pipeline);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const nodeArgs = values['heap-mb'] ? [`--max-old-space-size=${values['heap-mb']}`] : [];
const child = await startCli(port, ['--rate-limit', '0', '--log-level', 'error'], { cli: values.cli, nodeArgs });
let exited = null;
child.on('exit', (code, signal) => { exited = signal ?? `exit ${code}`; });

const status = (field) => {
  try {
    const line = readFileSync(`/proc/${child.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
    return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};
/** CPU seconds the server has used (user and system). */
const cpuSeconds = () => {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
};
const openFds = () => {
  try {
    return readdirSync(`/proc/${child.pid}/fd`).length;
  } catch {
    return 0;
  }
};

// ---- fill the default account's journal (about 8 KB an entry: the request part's budget) -------
const token = await (async () => {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  return (await res.json()).access_token;
})();
const filler = JSON.stringify({ name: 'slow client filler', notes: Array.from({ length: 8 }, (_, i) => `${i}`.padEnd(1000, 'x')) });
let next = 0;
await Promise.all(Array.from({ length: 16 }, async () => {
  while (next++ < LIMIT) {
    const res = await fetch(`${base}/customers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: filler });
    await res.arrayBuffer();
  }
}));
const full = await fetch(`${base}/_sandbox/requests?limit=${LIMIT}`);
const answerBytes = (await full.arrayBuffer()).byteLength;

// The fill's kept-alive connections close after the server's 5 s keep-alive time-out.
await sleep(6000);
const baseline = { rssMb: status('VmRSS'), fds: openFds(), cpu: cpuSeconds() };

// ---- the non-reading clients ---------------------------------------------------------------------
const request = `GET /_sandbox/requests?limit=${LIMIT} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`.repeat(PIPELINE);
const clients = [];
for (let i = 0; i < SOCKETS; i++) {
  const socket = net.connect(port, '127.0.0.1');
  const client = { socket, bytes: 0, error: null, ended: false };
  socket.on('error', (error) => { client.error = error.code ?? error.message; });
  socket.on('connect', () => {
    socket.pause();
    socket.write(request);
  });
  clients.push(client);
}

// ---- while they hold: memory, descriptors, and a normal client's health checks --------------------
const started = Date.now();
let peakRssMb = 0;
let hwmMb = 0;
let cpuUsed = 0;
let lastFds = 0;
let peakFds = 0;
let allClosedAtMs = null;
const sampler = setInterval(() => {
  peakRssMb = Math.max(peakRssMb, status('VmRSS'));
  // Read while the server lives (a server that died leaves its last figures).
  hwmMb = Math.max(hwmMb, status('VmHWM'));
  cpuUsed = Math.max(cpuUsed, cpuSeconds() - baseline.cpu);
  lastFds = exited ? lastFds : openFds();
  peakFds = Math.max(peakFds, lastFds);
  // The health checks keep one connection of their own.
  if (allClosedAtMs === null && peakFds > baseline.fds + 2 && lastFds <= baseline.fds + 1) allClosedAtMs = Date.now() - started;
}, 100);
const latencies = [];
let healthFailures = 0;
while (Date.now() - started < HOLD_MS && !exited) {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}/_sandbox/health`, { signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    if (!res.ok) healthFailures += 1;
  } catch {
    healthFailures += 1;
  }
  latencies.push(performance.now() - t0);
  await sleep(200);
}
clearInterval(sampler);
const endRssMb = status('VmRSS');

// ---- now read: a dropped connection ends short of its answer -------------------------------------
await Promise.all(clients.map((client) => new Promise((resolve) => {
  const { socket } = client;
  const done = () => resolve();
  socket.on('data', (chunk) => { client.bytes += chunk.length; });
  socket.on('end', () => { client.ended = true; });
  socket.on('close', done);
  if (socket.destroyed) return done();
  socket.resume();
  // A connection never dropped stays open (keep-alive) once its answer is read.
  const check = setInterval(() => {
    if (client.bytes >= PIPELINE * answerBytes) {
      clearInterval(check);
      socket.destroy();
    }
  }, 50);
  socket.on('close', () => clearInterval(check));
})));

const complete = clients.filter((c) => c.bytes >= PIPELINE * answerBytes).length;
const dropped = SOCKETS - complete;
latencies.sort((a, b) => a - b);
const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : NaN);
const maxHealthMs = latencies.at(-1) ?? NaN;
const failures = [];
if (exited) failures.push(`the server died (${exited})`);
if (!(maxHealthMs <= HEALTH_GOAL_MS)) failures.push(`/health took ${Math.round(maxHealthMs)} ms (goal ${HEALTH_GOAL_MS})`);
if (healthFailures) failures.push(`${healthFailures} health checks failed`);
if (!(hwmMb <= RSS_GOAL_MB)) failures.push(`peak RSS ${Math.round(hwmMb)} MB (goal ${RSS_GOAL_MB})`);
if (lastFds > baseline.fds + 1) failures.push(`${lastFds - baseline.fds} connections still open at the end of the hold`);
if (!exited) child.kill('SIGTERM');

console.log([
  `${values['heap-mb'] ? `heap ${values['heap-mb']} MB, ` : ''}${SOCKETS} non-reading sockets x ${PIPELINE} GET /_sandbox/requests?limit=${LIMIT} (${(answerBytes / 1024 / 1024).toFixed(1)} MB each), held ${HOLD_MS / 1000} s:`,
  `server CPU ${cpuUsed.toFixed(1)} s;`,
  `RSS ${Math.round(baseline.rssMb)} MB before, peak ${Math.round(hwmMb)} MB (sampled ${Math.round(peakRssMb)}), ${Math.round(endRssMb)} MB at the end;`,
  `/health ${latencies.length} calls, p50 ${Math.round(pct(0.5))} ms, p99 ${Math.round(pct(0.99))} ms, max ${Math.round(maxHealthMs)} ms, ${healthFailures} failed;`,
  `${dropped} dropped (cut short), ${complete} read whole; descriptors ${baseline.fds} before, peak ${peakFds}, ${lastFds} at the end${allClosedAtMs === null ? '' : `, back to the baseline after ${(allClosedAtMs / 1000).toFixed(1)} s`};`,
  failures.length ? `FAIL: ${failures.join('; ')}` : 'PASS',
].join(' '));
process.exit(failures.length ? 1 : 0);
