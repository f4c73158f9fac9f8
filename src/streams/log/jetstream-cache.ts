// Recent JetStream messages of the log, by stream and sequence, bounded by bytes. Stored messages
// never change (nothing is deleted or rewritten), so a cached copy is always right. Appends put
// their own message here, so consumers on the node that produced read it without a round trip.

export interface CachedBatch {
  /** Offset of the batch's first record. */
  readonly base: number;
  readonly count: number;
  readonly data: Uint8Array;
}

export class BatchCache {
  private readonly entries = new Map<string, CachedBatch>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(stream: string, seq: number): CachedBatch | undefined {
    return this.entries.get(`${stream}#${seq}`);
  }

  put(stream: string, seq: number, batch: CachedBatch): void {
    if (batch.data.length > this.maxBytes) return;
    const key = `${stream}#${seq}`;
    if (this.entries.has(key)) return;
    this.entries.set(key, batch);
    this.bytes += batch.data.length;
    // A Map iterates in insertion order: the oldest entries go first.
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldKey);
      this.bytes -= old.data.length;
    }
  }
}
