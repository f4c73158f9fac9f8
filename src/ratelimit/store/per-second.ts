// KVSTORE_PERSECOND: limits whose unit is SECOND go to their own store, everything else to the
// main one (the upstream split). Each call still makes at most one round trip per store, and
// the two stores are asked in parallel.

import type { CounterOp, CounterStore, Counts } from './types.js';

export class PerSecondRouter implements CounterStore {
  readonly kind: string;

  constructor(
    readonly main: CounterStore,
    readonly perSecond: CounterStore,
  ) {
    // The kind names the error statistic (<kind>_error); both stores are the same kind.
    this.kind = main.kind;
  }

  increment(ops: readonly CounterOp[], nowMs: number): Counts | Promise<Counts> {
    return this.route(ops, (store, part) => store.increment(part, nowMs));
  }

  peek(ops: readonly CounterOp[], nowMs: number): Counts | Promise<Counts> {
    return this.route(ops, (store, part) => store.peek(part, nowMs));
  }

  healthy(): boolean {
    return this.main.healthy() && this.perSecond.healthy();
  }

  async close(): Promise<void> {
    await Promise.all([this.main.close(), this.perSecond.close()]);
  }

  private route(
    ops: readonly CounterOp[],
    call: (store: CounterStore, part: CounterOp[]) => Counts | Promise<Counts>,
  ): Counts | Promise<Counts> {
    const mainOps: CounterOp[] = [];
    const secondOps: CounterOp[] = [];
    const where: number[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      if (op.divider === 1) {
        where[i] = -(secondOps.length + 1);
        secondOps.push(op);
      } else {
        where[i] = mainOps.length;
        mainOps.push(op);
      }
    }
    if (secondOps.length === 0) return call(this.main, mainOps);
    if (mainOps.length === 0) return call(this.perSecond, secondOps);
    return Promise.all([call(this.main, mainOps), call(this.perSecond, secondOps)]).then(([m, s]) =>
      where.map((w) => (w >= 0 ? m[w]! : s[-w - 1]!)),
    );
  }
}
