// A small pool of ioredis connections ("lanes") and the batcher in front of it.
//
// Decisions do not talk to a connection directly: they queue their commands, and a flush sends
// everything queued as one pipeline (one socket write, one round trip) on a free lane.
//  - KVSTORE_PIPELINE_WINDOW 0: flush at the end of the current event-loop turn (setImmediate),
//    so nothing waits on a timer; commands that arrive in the same turn share a write.
//  - > 0: flush after that window, trading up to the window in latency for larger batches.
// ioredis connections are multiplexed, so "a connection is taken" has to be defined: a lane is
// busy while one batch is in flight on it. The pool is empty when every ready lane is busy;
// queued commands then keep accumulating (they join the next batch), and
// KVSTORE_POOL_ON_EMPTY_BEHAVIOR decides what happens if no lane frees up:
//  - WAIT: keep waiting (the failure policy's time-out still bounds the decision);
//  - ERROR: after KVSTORE_POOL_ON_EMPTY_WAIT_DURATION the queued decisions fail (pool empty);
//  - CREATE: after that wait an overflow connection is opened for the queued batch and closed
//    once the batch is done.
// In cluster mode a batch is split per node (a cluster pipeline must stay on one node) and at
// most KVSTORE_CLUSTER_PIPELINE_PARALLELISM node groups of one batch run at a time.

import type { Cluster } from 'ioredis';
import type { RedisSettings } from '../settings/index.js';
import { createRedisClient, isReady, type RedisClient } from './redis-client.js';
import { keySlot } from './redis-slot.js';
import { CodedError } from '../../core/errors.js';

/** One Redis command: name, key, then arguments. */
export type Cmd = [name: string, key: string, ...args: (string | number)[]];

export class RedisStoreError extends CodedError {
  constructor(message: string) {
    super('redis_failed', message);
  }
}

interface Job {
  cmds: Cmd[];
  resolve(results: unknown[]): void;
  reject(error: Error): void;
}

interface Lane {
  client: RedisClient;
  busy: boolean;
  overflow: boolean;
}

/** Bounds one pipeline; a backlog bigger than this goes out as several batches on several lanes. */
const MAX_BATCH_COMMANDS = 8192;

export interface PoolStats {
  active: number;
  total: number;
  overflowCreated: number;
  localClose: number;
}

export class RedisPipeliner {
  private readonly lanes: Lane[] = [];
  private pending: Job[] = [];
  private pendingCommands = 0;
  private scheduled = false;
  private emptyTimer: NodeJS.Timeout | undefined;
  private next = 0;
  private closed = false;
  private everReady = false;
  private overflowCreated = 0;
  private localClose = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly settings: RedisSettings,
    private readonly makeClient: () => RedisClient = () => createRedisClient(settings),
  ) {
    for (let i = 0; i < settings.poolSize; i++) this.lanes.push(this.openLane(false));
  }

  private openLane(overflow: boolean): Lane {
    const client = this.makeClient();
    const lane: Lane = { client, busy: false, overflow };
    // ioredis emits 'error' for every failed reconnect; the health state and the failure
    // policy report those, so an unhandled-error crash must not.
    client.on('error', () => undefined);
    client.on('ready', () => {
      this.everReady = true;
      this.changed();
      if (this.pending.length > 0) this.flush();
    });
    client.on('close', () => this.changed());
    client.on('end', () => this.changed());
    return lane;
  }

  /** Called when the number of ready connections may have changed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  get connectedOnce(): boolean {
    return this.everReady;
  }

  activeConnections(): number {
    let n = 0;
    for (const lane of this.lanes) if (isReady(lane.client)) n++;
    return n;
  }

  stats(): PoolStats {
    return {
      active: this.activeConnections(),
      total: this.lanes.length,
      overflowCreated: this.overflowCreated,
      localClose: this.localClose,
    };
  }

  /** The clients, for set-up checks and tests. */
  clients(): RedisClient[] {
    return this.lanes.map((l) => l.client);
  }

  submit(cmds: Cmd[]): Promise<unknown[]> {
    if (this.closed) return Promise.reject(new RedisStoreError(`${this.settings.family} store is closed`));
    if (cmds.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.pending.push({ cmds, resolve, reject });
      this.pendingCommands += cmds.length;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.settings.pipelineWindowMs <= 0) setImmediate(this.flushScheduled);
    else setTimeout(this.flushScheduled, this.settings.pipelineWindowMs);
  }

  private readonly flushScheduled = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    while (this.pending.length > 0) {
      const lane = this.freeLane();
      if (lane === 'none-ready') {
        this.failPending(new RedisStoreError(`${this.settings.family} store: no connection to Redis`));
        return;
      }
      if (lane === undefined) {
        this.poolEmpty();
        return;
      }
      this.run(lane, this.takeBatch());
    }
  }

  private takeBatch(): Job[] {
    if (this.pendingCommands <= MAX_BATCH_COMMANDS) {
      const all = this.pending;
      this.pending = [];
      this.pendingCommands = 0;
      return all;
    }
    let n = 0;
    let count = 0;
    while (
      n < this.pending.length &&
      (count === 0 || count + this.pending[n]!.cmds.length <= MAX_BATCH_COMMANDS)
    ) {
      count += this.pending[n]!.cmds.length;
      n++;
    }
    this.pendingCommands -= count;
    return this.pending.splice(0, n);
  }

  /** A ready, idle lane (round robin); undefined when all ready lanes are busy. */
  private freeLane(): Lane | undefined | 'none-ready' {
    let anyReady = false;
    const n = this.lanes.length;
    for (let i = 0; i < n; i++) {
      const lane = this.lanes[(this.next + i) % n]!;
      if (!isReady(lane.client)) continue;
      anyReady = true;
      if (!lane.busy) {
        this.next = (this.next + i + 1) % n;
        return lane;
      }
    }
    return anyReady ? undefined : 'none-ready';
  }

  private poolEmpty(): void {
    const behavior = this.settings.poolOnEmptyBehavior;
    if (behavior === 'WAIT' || this.emptyTimer) return;
    this.emptyTimer = setTimeout(() => {
      this.emptyTimer = undefined;
      if (this.pending.length === 0) return;
      const lane = this.freeLane();
      if (lane !== undefined && lane !== 'none-ready') {
        this.flush();
      } else if (behavior === 'ERROR') {
        this.failPending(
          new RedisStoreError(
            `${this.settings.family} store: connection pool empty after ${this.settings.poolOnEmptyWaitMs} ms`,
          ),
        );
      } else {
        this.overflowCreated++;
        this.run(this.openLane(true), this.takeBatch());
        if (this.pending.length > 0) this.poolEmpty();
      }
    }, this.settings.poolOnEmptyWaitMs);
  }

  private failPending(error: Error): void {
    const jobs = this.pending;
    this.pending = [];
    this.pendingCommands = 0;
    for (const job of jobs) job.reject(error);
  }

  private run(lane: Lane, jobs: Job[]): void {
    lane.busy = true;
    const done =
      this.settings.topology === 'cluster'
        ? this.execCluster(lane.client as Cluster, jobs)
        : this.execSingle(lane.client, jobs);
    void done.finally(() => this.release(lane));
  }

  private release(lane: Lane): void {
    lane.busy = false;
    if (lane.overflow) {
      this.localClose++;
      lane.client.disconnect();
    }
    if (this.pending.length > 0 && !this.closed) this.flush();
  }

  private async execSingle(client: RedisClient, jobs: Job[]): Promise<void> {
    const all: Cmd[] = [];
    for (const job of jobs) for (const cmd of job.cmds) all.push(cmd);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await client.pipeline(all).exec();
    } catch (error) {
      for (const job of jobs) job.reject(asStoreError(error));
      return;
    }
    if (!replies) {
      for (const job of jobs) job.reject(new RedisStoreError('redis pipeline returned no replies'));
      return;
    }
    let offset = 0;
    for (const job of jobs) {
      settle(job, replies, offset);
      offset += job.cmds.length;
    }
  }

  private async execCluster(cluster: Cluster, jobs: Job[]): Promise<void> {
    // Group every command by the node that serves its slot, remembering where its reply goes.
    const groups = new Map<string, { cmds: Cmd[]; where: number[] }>();
    const replies: [Error | null, unknown][] = [];
    let index = 0;
    for (const job of jobs) {
      for (const cmd of job.cmds) {
        const slot = keySlot(cmd[1]);
        const node = cluster.slots[slot]?.[0] ?? `slot:${slot}`;
        let group = groups.get(node);
        if (!group) {
          group = { cmds: [], where: [] };
          groups.set(node, group);
        }
        group.cmds.push(cmd);
        group.where.push(index++);
      }
    }
    const queue = [...groups.values()];
    const parallelism = Math.max(1, this.settings.clusterPipelineParallelism);
    const worker = async (): Promise<void> => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        try {
          const out = await cluster.pipeline(g.cmds).exec();
          for (let i = 0; i < g.where.length; i++) {
            replies[g.where[i]!] = out?.[i] ?? [
              new RedisStoreError('redis pipeline returned no reply'),
              null,
            ];
          }
        } catch (error) {
          for (const w of g.where) replies[w] = [asStoreError(error), null];
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallelism, queue.length) }, worker));
    let offset = 0;
    for (const job of jobs) {
      settle(job, replies, offset);
      offset += job.cmds.length;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.emptyTimer) clearTimeout(this.emptyTimer);
    this.failPending(new RedisStoreError(`${this.settings.family} store is closed`));
    await Promise.all(
      this.lanes.map(async (lane) => {
        try {
          if (isReady(lane.client)) await lane.client.quit();
          else lane.client.disconnect();
        } catch {
          lane.client.disconnect();
        }
      }),
    );
  }
}

function settle(job: Job, replies: [Error | null, unknown][], offset: number): void {
  const results = new Array<unknown>(job.cmds.length);
  for (let i = 0; i < job.cmds.length; i++) {
    const reply = replies[offset + i];
    if (!reply) {
      job.reject(new RedisStoreError('redis pipeline reply missing'));
      return;
    }
    if (reply[0]) {
      job.reject(asStoreError(reply[0]));
      return;
    }
    results[i] = reply[1];
  }
  job.resolve(results);
}

function asStoreError(error: unknown): Error {
  if (error instanceof RedisStoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RedisStoreError(`redis: ${message}`);
}
