// Owns the live-stream feature: GET /_sandbox/stream on the control plane (the account's events,
// delivery attempts, journaled requests and clock advances as Server-Sent Events, optionally
// forwarding deliveries to a URL for as long as the stream is open), installed as the `stream` service.
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import type { Handler } from '../http/context.js';
import { forwardSpec, sweepForwarders } from './forwarders.js';
import { StreamHub, parseTypes } from './hub.js';

export const STREAM_SERVICE = 'stream';

export function streamHub(deps: Deps): StreamHub {
  return deps.services.installed(STREAM_SERVICE);
}

const openStream: Handler<'sandboxStream'> = ({ deps, account, query, headers, req, res }) => {
  const types = parseTypes(query.types);
  const secret = headers['x-sandbox-forward-secret'];
  const forward = forwardSpec(query, Array.isArray(secret) ? secret[0] : secret);
  streamHub(deps).start(account, req, res, types, forward);
  // The headers are sent and the stream stays open: the router sends nothing more.
  return { status: 200 };
};

export const streamFeature: Feature = {
  name: 'stream',
  control: { sandboxStream: openStream },
  install(deps) {
    const hub = new StreamHub(deps);
    hub.install();
    deps.services.set(STREAM_SERVICE, hub);
    // After the webhooks feature (FEATURES order): its queue is there to drop stale forwarders from.
    sweepForwarders(deps);
  },
};
