// Group commit of one kind of statement (docs/automation.md, "Batching on PostgreSQL"). A
// statement outside a transaction is a commit of its own, and a commit waits for its WAL flush,
// which costs far more than the statement. So while no statement of this kind is in flight an item
// goes out at once (after the current turn, so items handed over together share it); items handed
// over while one is in flight wait for it and then go together as one statement. There is no
// timer: under no load an item waits for nothing, under load the batch is what arrived during
// one round trip. Each caller's promise settles with its own result when its statement commits.
//
// A batch that fails for another reason than an unreachable database (one bad item) is sent again
// one item at a time, so only the items that fail are rejected.

import { unavailableReason } from './pool.js';

interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export class Batcher<T, R> {
  private pending: Pending<T, R>[] = [];
  private sending = false;

  /**
   * `send` writes the items in one statement and returns one result per item, in their order.
   * `max` bounds a statement's items (its parameters' size); more go in the next statement.
   */
  constructor(
    private readonly send: (items: T[]) => Promise<R[]>,
    private readonly max = 256,
  ) {}

  /** Items handed over and not yet sent (they go in the next statement). */
  get waiting(): number {
    return this.pending.length;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.sending) return;
      this.sending = true;
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.max);
        await this.sendBatch(batch);
      }
    } finally {
      this.sending = false;
    }
  }

  private async sendBatch(batch: Pending<T, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.send(batch.map((p) => p.item));
    } catch (err) {
      if (batch.length === 1 || unavailableReason(err)) for (const p of batch) p.reject(err);
      else for (const p of batch) await this.sendBatch([p]);
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]!));
  }
}
