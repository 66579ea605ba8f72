// Owns the unit of work of one account (or of the store's partners and keys): what a request (or a
// due job, a fixture load, a batch) wrote, so that it either all stays or all goes. Writes are applied
// to the data as they happen (reads inside the work see them, and the store's indexes stay exact),
// each with its inverse kept here; a thrown error runs the inverses newest first, so a refused request
// leaves the account as it found it. A commit has two steps: `prepare` hands every change to
// persistence (which serialises it: a value the data file cannot hold throws there, and the work is
// rolled back like any refused request), then `commit` runs what others may observe (recorded
// events, the clearing of tombstones). A rollback drops both.
//
// A unit of work is synchronous: work that awaits (an upload reading a PDF) commits what it wrote
// before its first await, and opens its own unit of work for what it writes after (see
// Account.transaction). Between two awaits nothing else runs, so a synchronous unit of work is also
// isolated: no other request can see its writes before it commits.

export class UnitOfWork {
  // Made on first use: most requests only read, and pay for none of them.
  private inverses: Array<() => void> | undefined;
  private reports: Array<() => void> | undefined;
  private commits: Array<() => void> | undefined;
  private onceKeys: Set<string> | undefined;
  private undoKeys: Set<string> | undefined;
  private done = false;

  /** Run `inverse` if the work is rolled back (inverses run newest first). */
  undo(inverse: () => void): void {
    (this.inverses ??= []).push(inverse);
  }

  /** The same as undo, once per key: `make` is called the first time only (to take a copy before a first change). */
  undoOnce(key: string, make: () => () => void): void {
    const keys = (this.undoKeys ??= new Set());
    if (keys.has(key)) return;
    keys.add(key);
    this.undo(make());
  }

  /** Run `report` as the work prepares to commit, before any effect (persistence's record of a change); dropped by a rollback. */
  beforeCommit(report: () => void): void {
    (this.reports ??= []).push(report);
  }

  /** Run `effect` once the work commits; dropped by a rollback. */
  afterCommit(effect: () => void): void {
    (this.commits ??= []).push(effect);
  }

  /** The same as afterCommit, once per key (a collection's tombstone clearing, say). */
  afterCommitOnce(key: string, effect: () => void): void {
    const keys = (this.onceKeys ??= new Set());
    if (keys.has(key)) return;
    keys.add(key);
    this.afterCommit(effect);
  }

  /** Take over what an inner unit of work (a savepoint) wrote, as it returned: it commits or rolls back with this one. */
  absorb(inner: UnitOfWork): void {
    inner.finish();
    for (const inverse of inner.inverses ?? []) this.undo(inverse);
    for (const report of inner.reports ?? []) this.beforeCommit(report);
    for (const effect of inner.commits ?? []) this.afterCommit(effect);
    for (const key of inner.onceKeys ?? []) (this.onceKeys ??= new Set()).add(key);
    for (const key of inner.undoKeys ?? []) (this.undoKeys ??= new Set()).add(key);
  }

  /** Undo everything written, newest first, and drop the effects. */
  rollback(): void {
    this.finish();
    const inverses = this.inverses ?? [];
    for (let i = inverses.length - 1; i >= 0; i--) inverses[i]();
  }

  /**
   * Hand every change to persistence, in the order they were made; what throws here (a value that
   * cannot be serialised) is the work's error: the caller rolls the work back.
   */
  prepare(): void {
    const reports = this.reports;
    this.reports = undefined;
    if (reports) for (const report of reports) report();
  }

  /**
   * Keep everything written and run the effects, in the order they were asked for. An effect that
   * throws (a listener) does not stop the others; the first error is thrown after all ran.
   */
  commit(): void {
    this.finish();
    if (!this.commits) return;
    let failure: { error: unknown } | undefined;
    for (const effect of this.commits) {
      try {
        effect();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  private finish(): void {
    if (this.done) throw new Error('unit of work finished twice');
    this.done = true;
  }
}
