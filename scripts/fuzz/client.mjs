// Owns the fuzzers' HTTP side: a keep-alive client that sends a request exactly as built (raw path,
// raw body, any content type) to a sandbox listening on loopback, and the network guard that keeps
// every in-process connection on loopback (generated webhook and PDF urls name real hosts).
import http from 'node:http';
import net from 'node:net';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/i;

let guards = 0;
let unguardedConnect;
/** Connections refused by the guard, by host (a count per host, for the report). */
export const refusedConnections = new Map();

/**
 * Refuse, in this process, every TCP connection to a host other than loopback: the sandbox under
 * fuzz tries to deliver webhooks and fetch PDFs at whatever address a generated body names, and
 * this machine may only send traffic to itself. The refusal is an ordinary connection error.
 * Answers the function that lifts the guard: it patches Node's own `net` module, which every test
 * file of a Jest worker shares, so it must not outlive the run (a later suite's local HTTPS server
 * reached under a made-up name was refused once).
 */
export function guardNetwork() {
  if (guards++ === 0) {
    unguardedConnect = net.Socket.prototype.connect;
    const connect = unguardedConnect;
    net.Socket.prototype.connect = function guardedConnect(...args) {
      const first = args[0];
      const options = Array.isArray(first) ? first[0] : first;
      const host = typeof options === 'object' && options !== null ? (options.path ? 'localhost' : options.host ?? 'localhost') : typeof args[1] === 'string' ? args[1] : 'localhost';
      const bare = String(host).replace(/^\[|\]$/g, '');
      if (!LOOPBACK.test(bare)) {
        refusedConnections.set(bare, (refusedConnections.get(bare) ?? 0) + 1);
        const error = Object.assign(new Error(`connect ECONNREFUSED ${bare} (fuzz network guard: loopback only)`), { code: 'ECONNREFUSED' });
        process.nextTick(() => this.destroy(error));
        return this;
      }
      return connect.apply(this, args);
    };
  }
  let lifted = false;
  return () => {
    if (lifted) return;
    lifted = true;
    if (--guards === 0) net.Socket.prototype.connect = unguardedConnect;
  };
}

/**
 * A client for one sandbox origin. `send` never throws: a connection that is cut or hangs comes back
 * as status 0 with `error` set, so a harness can count it as a failure and go on.
 */
export function createClient(origin, { timeoutMs = 30_000 } = {}) {
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  // A kept-alive socket can be closed by the server (its idle time-out) just as a request goes out
  // on it; Node's documentation says to retry such a request once. A reset on a fresh socket is the
  // server's doing and is reported.
  async function send(request) {
    const first = await sendOnce(request);
    return first.reusedSocketReset ? sendOnce(request) : first;
  }
  function sendOnce({ method = 'GET', path, headers = {}, body }) {
    return new Promise((resolve) => {
      const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(String(body));
      const all = { ...headers };
      if (payload !== undefined && all['content-length'] === undefined) all['content-length'] = payload.length;
      let req;
      try {
        req = http.request({ host: url.hostname, port: url.port, method, path, headers: all, agent });
      } catch (error) {
        // Node refuses to send some requests at all (a control character in the path or a header).
        resolve({ status: -1, headers: {}, text: '', json: undefined, error: `not sent: ${error.code ?? error.message}` });
        return;
      }
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('response', (res) => {
        // A stream (Server-Sent Events) never ends: its status and headers are the answer.
        if (/event-stream/.test(res.headers['content-type'] ?? '')) {
          clearTimeout(timer);
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined, stream: true });
          return;
        }
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          if (/json/.test(res.headers['content-type'] ?? '') && text) {
            try { json = JSON.parse(text); } catch { json = undefined; }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          resolve({ status: 0, headers: {}, text: '', json: undefined, error: error.message });
        });
      });
      req.on('error', (error) => {
        clearTimeout(timer);
        resolve({ status: 0, headers: {}, text: '', json: undefined, error: error.message, reusedSocketReset: req.reusedSocket && error.code === 'ECONNRESET' });
      });
      req.end(payload);
    });
  }
  return { send, origin, close: () => agent.destroy() };
}

/** Listen on an ephemeral loopback port; answers the origin and a close function. */
export async function listen(app) {
  const server = http.createServer({ maxHeaderSize: 16 * 1024 }, app);
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
