// Callers waiting for a run's end. A run live on this node is waited for here (resolved when its
// end is stored, completion.ts); any other run (queued, or executed by another node) through the
// queue, whose done is heard whichever node ran it, and then read from the store.

import { notFound } from '../errors.js';
import type { Engine } from './engine.js';
import { TERMINAL, type RunRecord } from './types.js';

export class Waiters {
  private readonly waiting = new Map<string, Set<(run: RunRecord) => void>>();

  constructor(private readonly e: Engine) {}

  /**
   * Resolves with the run once terminal, or with its current state after `timeoutMs` (0 = no
   * limit). `known`: the run as its caller has it from a committed write (the start's answer),
   * so it is not read back.
   */
  async waitFor(id: string, timeoutMs: number, known?: RunRecord): Promise<RunRecord> {
    // A live run is read without awaiting, so its waiter is registered before it can finish; a
    // run that is not live has its final record stored.
    const current = this.e.active.get(id)?.record ?? known ?? (await this.e.store.get(id));
    if (!current) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    if (TERMINAL.has(current.status) && !this.e.active.has(id)) return current;
    let timer: NodeJS.Timeout | undefined;
    const late = (resolve: (run: RunRecord) => void) => {
      timer = setTimeout(() => {
        this.e.get(id).then(
          (run) => resolve(run ?? current),
          () => resolve(current),
        );
      }, timeoutMs);
    };
    if (!this.e.active.has(id)) {
      // Whichever node runs it, its end is announced through the queue.
      const done = this.waitQueued(id, current);
      if (timeoutMs <= 0) return done;
      return Promise.race([done, new Promise<RunRecord>(late)]).finally(() => clearTimeout(timer));
    }
    return new Promise((resolve) => {
      const done = (run: RunRecord) => {
        clearTimeout(timer);
        resolve(run);
      };
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      set.add(done);
      if (timeoutMs > 0)
        late((run) => {
          this.waiting.get(id)?.delete(done);
          resolve(run);
        });
    });
  }

  /** The run's end is stored: its waiters here get its final record. */
  resolve(id: string, run: RunRecord): void {
    const set = this.waiting.get(id);
    if (!set) return;
    this.waiting.delete(id);
    for (const done of set) done(run);
  }

  /** The run is no longer live here: its waiters go on waiting for its end through the queue. */
  handOver(id: string, last: RunRecord): void {
    const set = this.waiting.get(id);
    if (!set) return;
    this.waiting.delete(id);
    void this.waitQueued(id, last).then((run) => {
      for (const done of set) done(run);
    });
  }

  /**
   * The run's final record once it is done on whichever node ran it: from this node's end of it
   * (a run claimed here after the waiter came), else read from the store.
   */
  private async waitQueued(id: string, current: RunRecord): Promise<RunRecord> {
    let endedHere: RunRecord | undefined;
    const here = (run: RunRecord) => void (endedHere = run);
    let set = this.waiting.get(id);
    if (!set) this.waiting.set(id, (set = new Set()));
    set.add(here);
    try {
      return await this.doneAnywhere(id, current, () => endedHere);
    } finally {
      const mine = this.waiting.get(id);
      mine?.delete(here);
      if (mine?.size === 0) this.waiting.delete(id);
    }
  }

  private async doneAnywhere(
    id: string,
    current: RunRecord,
    endedHere: () => RunRecord | undefined,
  ): Promise<RunRecord> {
    for (;;) {
      try {
        // This node's own end comes with the answer (the in-process queue's, or this node's end of
        // a run it claimed after the waiter came); another node's is read.
        return (await this.e.queue.waitForDone(id)) ?? endedHere() ?? (await this.storedFinal(id, current));
      } catch {
        // The database is unreachable: the queue's listener reconnects and says so; until then
        // this waiter keeps the run's last known state.
        if (this.e.closing) return current;
        await new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  }

  /**
   * The stored record of a run the queue says is done. A cancelled queued run is marked done
   * just before its record is written (cancel.ts), so a waiter may read it a moment early: it
   * reads again, a bounded number of times.
   */
  async storedFinal(id: string, fallback: RunRecord): Promise<RunRecord> {
    let run = (await this.e.store.get(id)) ?? fallback;
    for (let i = 0; i < 100 && !TERMINAL.has(run.status); i++) {
      await new Promise<void>((resolve) => setTimeout(resolve, 20));
      run = (await this.e.store.get(id)) ?? run;
    }
    return run;
  }
}
