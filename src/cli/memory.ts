// Owns handing start-up's garbage back to the system once the command line's server listens. Start-up
// allocates far more than a waiting sandbox keeps (documents parsed and dereferenced, validators
// compiled, the bundle compiled), and V8 keeps the heap it grew to, the young generation's 16 MB
// included, until its memory reducer runs some 30 s later: one memory-reducing collection soon after
// start brings a waiting sandbox from about 97 MB to about 80 MB at once. Only the command line does
// this: a process that embeds the sandbox (startSandbox) manages its own heap.
//
// The memory reducer also makes a sandbox that sat idle for half a minute write some 15% slower for
// its next seconds. `node --no-memory-reducer` removes that, and the sandbox does not set it: V8
// reads it only on node's command line, which not every npx launcher passes on, and an idle sandbox
// would keep its largest heap.
import v8 from 'node:v8';
import vm from 'node:vm';

/** Heaps larger than this after start (a large --data file) are left alone: their full collection would pause requests. */
const SMALL_HEAP_BYTES = 64 * 1024 * 1024;

type Collect = (options: { type: 'major'; flavor: 'last-resort' }) => void;

/** Once the server has settled after listening (not before the first answers), when the heap is small. */
export function releaseStartupMemory(): void {
  if (process.memoryUsage().heapUsed > SMALL_HEAP_BYTES) return;
  try {
    // The collector is reachable from a context made while --expose-gc is set, not from this one's
    // globals: it is used once here and never seen by anything else.
    v8.setFlagsFromString('--expose-gc');
    const collect = vm.runInNewContext('gc') as Collect;
    v8.setFlagsFromString('--no-expose-gc');
    // last-resort: collections that shrink the heap and the young generation (V8's gc extension).
    collect({ type: 'major', flavor: 'last-resort' });
  } catch {
    // A Node without the gc extension's options: the memory reducer does it later.
  }
}
