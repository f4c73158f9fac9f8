// The counter store seam. The engine hands a batch of increments (one per counted descriptor)
// and gets the counts after the increment. The memory store answers synchronously; a network
// store (Redis, memcached) returns a promise, and the engine awaits only then.

export interface CounterOp {
  /** CACHE_KEY_PREFIX + domain + `_` + Σ(key_value_) — without the window, which the store adds. */
  readonly key: string;
  /** Window length in seconds. */
  readonly divider: number;
  /** Hits to add; 0 checks without consuming. */
  readonly hits: number;
  /** The rule's requests_per_unit; lets a store keep its local over-limit cache (optional). */
  readonly limit?: number;
}

/** A count the store could not keep (memory table full): the engine lets the request pass. */
export const UNTRACKED = -1;

export type Counts = number[];

export interface CounterStore {
  readonly kind: string;
  /** Counts after adding each op's hits, in op order (UNTRACKED when the store could not count). */
  increment(ops: readonly CounterOp[], nowMs: number): Counts | Promise<Counts>;
  /** Current counts without changing them (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT). */
  peek(ops: readonly CounterOp[], nowMs: number): Counts | Promise<Counts>;
  /** Health of the cache-store component. */
  healthy(): boolean;
  close(): Promise<void>;
}
