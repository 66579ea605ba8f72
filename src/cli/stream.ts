// Owns reading the sandbox's live stream (GET /_sandbox/stream, Server-Sent Events) from the command
// line: one fetch with the account's token, parsed by eventsource-parser (well kept, handles the
// format's edge cases: CRLF, split chunks, multi-line data), until Ctrl-C or the sandbox closes it.
import { createParser } from 'eventsource-parser';
import { CliError, EXIT, RefusedError, type SandboxErrorBody } from './errors.js';
import type { SandboxClient } from './client.js';

export interface StreamMessage {
  type: string;
  data: Record<string, unknown>;
}

export interface StreamRequest {
  types: string[];
  forwardTo?: string;
  topics?: string[];
  secret?: string;
}

/**
 * Stream messages to `onMessage` until `signal` aborts (resolves: a clean stop) or the sandbox ends
 * the stream (rejects with exit 3, since the sandbox went away).
 */
export async function followStream(client: SandboxClient, request: StreamRequest, onMessage: (message: StreamMessage) => void, signal: AbortSignal): Promise<void> {
  const query = new URLSearchParams({ types: request.types.join(',') });
  if (request.forwardTo) query.set('forward_to', request.forwardTo);
  if (request.forwardTo && request.topics?.length) query.set('topics', request.topics.join(','));
  const headers = { ...(await client.headers()), Accept: 'text/event-stream' } as Record<string, string>;
  if (request.secret) headers['X-Sandbox-Forward-Secret'] = request.secret;
  const path = `/_sandbox/stream?${query}`;
  let res: Response;
  try {
    res = await client.fetch(path, { headers, signal });
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  if (!res.ok || !res.body) {
    const text = await res.text();
    let body: SandboxErrorBody = {};
    try {
      // An error answer of the sandbox: every one has this shape.
      body = JSON.parse(text) as SandboxErrorBody;
    } catch {
      body = { message: text.slice(0, 200) };
    }
    throw new RefusedError(`GET ${path}`, res.status, body);
  }
  const parser = createParser({
    onEvent: (event) => {
      if (!event.event) return;
      onMessage({ type: event.event, data: JSON.parse(event.data) as Record<string, unknown> });
    },
  });
  const decoder = new TextDecoder();
  try {
    // Node's web ReadableStream is async iterable; the DOM typings of fetch's body do not say so.
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  } catch (error) {
    if (signal.aborted) return;
    throw new CliError(`the stream from ${client.options.url} broke: ${(error as Error).message}`, EXIT.unreachable);
  }
  if (signal.aborted) return;
  throw new CliError(`the sandbox at ${client.options.url} closed the stream (was it stopped?)`, EXIT.unreachable);
}

/** An AbortSignal that fires on Ctrl-C (SIGINT) or SIGTERM, so streaming commands stop cleanly. */
export function stopSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
