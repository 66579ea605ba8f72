// A point where work waits until the test lets it go on (a handler held at its await while the test
// races it: a reset, a restore). Shared by test/reset-races.test.ts and test/snapshots.test.ts.

/** `wait` holds the work; `reached` resolves once work is waiting; `release` lets it go on. */
export function gate() {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => { arrive = resolve; });
  const released = new Promise<void>((resolve) => { release = resolve; });
  return { reached, release, wait: () => { arrive(); return released; } };
}
