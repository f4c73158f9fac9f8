// What a decision answers when its shared store is slow or down (KVSTORE_FAILURE_MODE).
// Every store call is bounded by KVSTORE_TIMEOUT; a time-out or store error calls `onError`
// (the factory counts ratelimit.service.call.should_rate_limit.redis_error and logs), then:
//  - open (default): the descriptors are counted as if their window had just started (count =
//    hits), so requests pass — except where the rule alone refuses them (requests_per_unit 0, or
//    hits above the limit);
//  - closed: the call fails with StoreUnavailableError; the servers answer gRPC UNAVAILABLE and
//    HTTP 500 with a JSON error body.
// A RateLimitRequestError from the store (a request it refuses) passes through unchanged.
// Nothing is remembered between calls, so the first call after the store returns is served by
// it again: recovery needs no action.

import type { FailureMode } from '../settings/index.js';
import { RateLimitRequestError } from '../types.js';
import type { CounterOp, CounterStore, Counts } from './types.js';
import { CodedError } from '../../core/errors.js';

export class StoreUnavailableError extends CodedError {
  constructor(
    message: string,
    readonly store: string,
  ) {
    super('store_unavailable', message);
  }
}

export interface FailurePolicyOptions {
  mode: FailureMode;
  timeoutMs: number;
  /** Store label in messages, e.g. `redis`, `redis_per_second`, `objcache`. */
  label: string;
  onError?: (error: Error) => void;
}

export class FailurePolicyStore implements CounterStore {
  readonly kind: string;

  constructor(
    readonly inner: CounterStore,
    private readonly options: FailurePolicyOptions,
  ) {
    this.kind = inner.kind;
  }

  increment(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    return this.guard(
      () => this.inner.increment(ops, nowMs),
      () => ops.map((op) => op.hits),
    );
  }

  peek(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    return this.guard(
      () => this.inner.peek(ops, nowMs),
      () => ops.map(() => 0),
    );
  }

  healthy(): boolean {
    return this.inner.healthy();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private guard(call: () => Counts | Promise<Counts>, openAnswer: () => Counts): Promise<Counts> {
    const { timeoutMs, label } = this.options;
    return new Promise<Counts>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // A refused request (e.g. a key the object cache cannot hold) is not a store outage.
        if (error instanceof RateLimitRequestError) {
          reject(error);
          return;
        }
        this.options.onError?.(error);
        if (this.options.mode === 'open') resolve(openAnswer());
        else reject(new StoreUnavailableError(`${label} store unavailable: ${error.message}`, label));
      };
      const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      let result: Counts | Promise<Counts>;
      try {
        result = call();
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      Promise.resolve(result).then(
        (counts) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(counts);
        },
        (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }
}
