// One change at a time per key. A review change reads the stored review, may move files, and
// writes the review back; two such changes to the same run interleaving at an `await` would lose
// one of them (a file added by one PUT dropped by the other). The automation service runs in one
// process, so an in-memory queue per key is enough.

export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
