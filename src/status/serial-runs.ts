/**
 * Background work of one kind in one process, one run at a time: an explicit run (a job, a
 * test) waits for the one under way and then runs, and kicks (a change just committed) coalesce
 * into at most one waiting run. Across processes the work is guarded by its rows (leases,
 * conditional updates); this only keeps one process from racing itself.
 */
export class SerialRuns {
  private tail: Promise<unknown> = Promise.resolve();
  private kickQueued = false;

  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => undefined);
    return next;
  }

  kick(fn: () => Promise<unknown>, onError: (err: unknown) => void): void {
    if (this.kickQueued) return;
    this.kickQueued = true;
    this.run(() => {
      this.kickQueued = false;
      return fn();
    }).catch(onError);
  }

  /** Resolves once every run asked for so far has ended. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
