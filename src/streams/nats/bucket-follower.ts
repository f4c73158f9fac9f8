// Keeps a node's copy of a JetStream key-value bucket current. The client's KV watch is an
// ordered push consumer that the client recreates when it misses the consumer's heartbeats;
// when every server of the cluster restarts, that recreation can fail for good without ending
// the iterator (seen in this project's restart tests: the watch neither yields nor ends), and
// the node would silently stop following the bucket. So the follower probes: every `probeMs`
// it reads the bucket's last sequence (a stream info request), and when the watch has not
// delivered a sequence that JetStream reported `stallMs` ago, it stops the watch and starts a
// new one after the last revision it delivered. A watch that ends is restarted the same way.
// The watch covers the whole bucket, so the bucket's last sequence is a revision it must see.
//
// A cluster can also come back with less than it acknowledged: nats-server 2.9 writes its
// stream files in the background, and in this project's tests a SIGKILL of every server at once
// lost the last few acknowledged writes of a bucket (4 of 2,145). The sequence numbers of the
// lost writes are then given to new writes, so "resume after the last revision seen" would skip
// them. So after the connection comes back (a lost tail needs the servers to have died, and with
// them this node's connection), `resync` reads the whole bucket again from its current values
// and reports which keys it holds; the owner drops from its copy what the bucket no longer has.

import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** Calls `then` each time the connection is back after a disconnection, until it closes. */
export function onReconnect(nc: NatsConnection, then: () => void): void {
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'reconnect') then();
  })().catch(() => undefined);
}

export interface BucketFollowerOptions {
  /** Called for every entry, in revision order, exactly once per revision. */
  readonly apply: (entry: KvWatchEntry) => void;
  /** Called once `seen` moved, after `apply`. */
  readonly delivered?: () => void;
  /**
   * After a resync, once the bucket's values are all applied again: the keys the bucket holds
   * (with a value or a delete marker). Keys of the copy that are not among them were lost.
   */
  readonly replayed?: (keys: ReadonlySet<string>) => void;
  readonly onError: (what: string, error: unknown) => void;
  /** How often the watch's progress is checked (and a lost watch retried). */
  readonly probeMs: number;
  /** How long a revision JetStream reported may stay undelivered before the watch restarts. */
  readonly stallMs: number;
  readonly now?: () => number;
}

type Watch = Awaited<ReturnType<KV['watch']>>;

export class BucketFollower {
  /** The newest revision applied. */
  seen = 0;
  /** How often the watch was started again (for the log and the tests). */
  restarts = 0;
  private watch: Watch | undefined;
  private following: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private probe: { revision: number; at: number } | undefined;
  private probing = false;
  private stopped = false;
  private resyncWanted = false;
  /** While a resync replays the bucket: the keys seen so far and the revision that completes it. */
  private replay: { keys: Set<string>; until: number } | undefined;
  private readonly now: () => number;

  constructor(
    private readonly kv: KV,
    private readonly options: BucketFollowerOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Starts the first watch (it replays the last value of every key) and resolves with the
   * bucket's last revision at that moment: the caller waits for `seen` to reach it to know its
   * copy is complete.
   */
  async start(): Promise<number> {
    const last = (await this.kv.status()).streamInfo.state.last_seq;
    const watch = await this.kv.watch({ key: '>' });
    this.following = this.follow(watch);
    this.timer = setInterval(() => void this.check(), this.options.probeMs);
    this.timer.unref();
    return last;
  }

  /** Reads the whole bucket again (see the top of this file); the watch goes on from there. */
  resync(): void {
    if (this.stopped) return;
    this.resyncWanted = true;
    this.watch?.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.watch?.stop();
    await this.following.catch(() => undefined);
  }

  private async follow(first: Watch): Promise<void> {
    let watch: Watch | undefined = first;
    while (!this.stopped) {
      if (watch) {
        this.watch = watch;
        try {
          for await (const entry of watch) {
            // A restarted watch may replay what the last one delivered just before it stopped.
            if (entry.revision <= this.seen) continue;
            try {
              this.options.apply(entry);
            } catch (error) {
              this.options.onError('applying a bucket change', error);
            }
            this.seen = entry.revision;
            this.replay?.keys.add(entry.key);
            this.finishReplay();
            this.options.delivered?.();
          }
        } catch (error) {
          this.options.onError('watching the bucket', error);
        }
      }
      if (this.stopped) return;
      await new Promise((resolve) => setTimeout(resolve, this.options.probeMs));
      if (this.stopped) return;
      this.restarts++;
      watch = await (this.resyncWanted ? this.watchEverything() : this.watchAfterSeen()).catch(
        (error: unknown) => {
          this.options.onError('watching the bucket again', error);
          return undefined;
        },
      );
      // Stopped while the new watch was being made: stop() could not reach it, so it is stopped
      // here (left running, its heartbeat timer would outlive the connection and the process).
      if (this.stopped) watch?.stop();
    }
  }

  private watchAfterSeen(): Promise<Watch> {
    return this.kv.watch({ key: '>', include: 'history', resumeFromRevision: this.seen + 1 });
  }

  /** The resync's watch: every key's current value, whatever revision this copy had reached. */
  private async watchEverything(): Promise<Watch> {
    const until = (await this.kv.status()).streamInfo.state.last_seq;
    const watch = await this.kv.watch({ key: '>' });
    this.resyncWanted = false;
    this.probe = undefined;
    this.seen = 0;
    this.replay = { keys: new Set(), until };
    this.finishReplay();
    return watch;
  }

  private finishReplay(): void {
    const replay = this.replay;
    if (!replay || this.seen < replay.until) return;
    this.replay = undefined;
    this.options.replayed?.(replay.keys);
  }

  private async check(): Promise<void> {
    if (this.stopped || this.probing) return;
    const probe = this.probe;
    if (probe && this.seen >= probe.revision) this.probe = undefined;
    else if (probe && this.now() - probe.at >= this.options.stallMs) {
      this.probe = undefined;
      this.options.onError(
        'watching the bucket',
        new Error(
          `the watch has not delivered revision ${probe.revision} for ${this.options.stallMs} ms; watching again`,
        ),
      );
      this.watch?.stop();
      return;
    }
    if (this.probe) return;
    this.probing = true;
    try {
      const at = this.now();
      const last = (await this.kv.status()).streamInfo.state.last_seq;
      if (last > this.seen && !this.stopped) this.probe = { revision: last, at };
    } catch {
      // The cluster does not answer (it may be restarting): nothing to compare with yet.
    } finally {
      this.probing = false;
    }
  }
}
