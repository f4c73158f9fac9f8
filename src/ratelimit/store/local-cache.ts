// The local over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES): keys a shared store has reported over
// their limit are answered in-process until they can be under again, sparing the store the
// round trip. Bounded by an estimate of the bytes held; the oldest entries go first.

export interface LocalCacheStats {
  hitCount: number;
  missCount: number;
  lookupCount: number;
  entryCount: number;
  evacuateCount: number;
  expiredCount: number;
  overwriteCount: number;
  bytes: number;
}

/** Map entry, string and number overhead in V8, measured loosely; only bounds memory. */
const ENTRY_OVERHEAD = 64;

function entryBytes(key: string): number {
  return ENTRY_OVERHEAD + key.length * 2;
}

export class LocalOverLimitCache {
  /** key → expiry (ms since epoch); Map order is insertion order, which is eviction order. */
  private readonly entries = new Map<string, number>();
  private bytes = 0;
  private readonly counters = { hit: 0, miss: 0, evacuate: 0, expired: 0, overwrite: 0 };

  constructor(readonly maxBytes: number) {
    if (!Number.isFinite(maxBytes) || maxBytes <= 0)
      throw new Error('LocalOverLimitCache needs a positive size');
  }

  has(key: string, nowMs: number): boolean {
    const until = this.entries.get(key);
    if (until === undefined) {
      this.counters.miss++;
      return false;
    }
    if (until <= nowMs) {
      this.remove(key);
      this.counters.expired++;
      this.counters.miss++;
      return false;
    }
    this.counters.hit++;
    return true;
  }

  /** Remembers `key` as over limit until `untilMs`. */
  set(key: string, untilMs: number, nowMs: number): void {
    if (untilMs <= nowMs) return;
    const size = entryBytes(key);
    if (size > this.maxBytes) return;
    if (this.entries.has(key)) {
      this.remove(key);
      this.counters.overwrite++;
    }
    while (this.bytes + size > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      const expiredAlready = (this.entries.get(oldest.value) ?? 0) <= nowMs;
      this.remove(oldest.value);
      if (expiredAlready) this.counters.expired++;
      else this.counters.evacuate++;
    }
    this.entries.set(key, untilMs);
    this.bytes += size;
  }

  private remove(key: string): void {
    if (this.entries.delete(key)) this.bytes -= entryBytes(key);
  }

  stats(): LocalCacheStats {
    const c = this.counters;
    return {
      hitCount: c.hit,
      missCount: c.miss,
      lookupCount: c.hit + c.miss,
      entryCount: this.entries.size,
      evacuateCount: c.evacuate,
      expiredCount: c.expired,
      overwriteCount: c.overwrite,
      bytes: this.bytes,
    };
  }
}
