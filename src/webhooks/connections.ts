// Owns the connections to webhook receivers: one keep-alive agent per receiver origin (scheme, host,
// port), so deliveries reuse a connection instead of opening one per attempt. Bounded: at most
// LIMITS.webhookReceiverPools origins, the least recently used one closed beyond that; a free
// connection is closed after a few idle seconds (sooner if the receiver's Keep-Alive hint says so).
// A receiver cannot poison its pool: a connection goes back to it only after a complete, read answer;
// an answer cut at the read cap, a time-out or a parse error destroys that connection.
import type { Agent } from 'node:http';
import { http, https } from '../node-http.js';
import { LIMITS } from '../limits.js';

/** A free connection closes after this long idle (Node uses the receiver's hint minus 1 s when shorter). */
const IDLE_MS = 4_000;

export class ReceiverConnections {
  /** Agents by origin, least recently used first (a Map keeps insertion order). */
  private readonly agents = new Map<string, Agent>();

  /** The agent for a receiver's origin (scheme, host and port, as URL.origin writes it), created on first use. */
  agentFor(origin: string, secure: boolean): Agent {
    let agent = this.agents.get(origin);
    if (agent) {
      this.agents.delete(origin);
    } else {
      // Deliveries of one account go one at a time; a few sockets let several accounts share a receiver.
      const options = { keepAlive: true, maxSockets: 8, maxFreeSockets: 8, timeout: IDLE_MS, scheduling: 'lifo' as const };
      agent = secure ? new (https().Agent)(options) : new http.Agent(options);
      if (this.agents.size >= LIMITS.webhookReceiverPools) {
        const [oldest, pool] = this.agents.entries().next().value as [string, Agent];
        this.agents.delete(oldest);
        pool.destroy();
      }
    }
    this.agents.set(origin, agent);
    return agent;
  }

  /** Origins with a pool now (for tests and the limits table). */
  get size(): number {
    return this.agents.size;
  }

  /** Close every connection (shutdown). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
