// Runs an experiment: starts one run per example, at most `concurrency` at a time, waits for
// each, scores it against its example and tells subscribers (the NDJSON stream) as each run
// completes. Cancelling stops new starts and cancels the runs in flight (queued ones end at
// once, running ones are asked to stop); finished runs and their scores stay.

import { randomBytes } from 'node:crypto';
import type { Principal } from '../../core/auth/types.js';
import type { BlobStore } from '../files/blob-store.js';
import type { RunService } from '../runs/service.js';
import { TERMINAL, type RunRecord } from '../runs/types.js';
import type { AutomationRecord } from '../registry/service.js';
import type { ExampleStore } from '../datasets/store.js';
import type { ExampleRecord } from '../datasets/types.js';
import { startExampleRun } from '../datasets/run-example.js';
import type { RunScorer } from '../evaluators/scoring.js';
import type { ExperimentStore } from './store.js';
import type { ExperimentEvent, ExperimentRecord } from './types.js';

export const newExperimentId = () => `exp_${randomBytes(9).toString('hex')}`;

interface Active {
  record: ExperimentRecord;
  cancelled: boolean;
  inFlight: Set<string>;
  listeners: Set<(e: ExperimentEvent | null) => void>;
  done: Promise<void>;
}

export class ExperimentRunner {
  private readonly active = new Map<string, Active>();
  private closing = false;

  constructor(
    private readonly deps: {
      store: ExperimentStore;
      examples: ExampleStore;
      runs: RunService;
      blobs: BlobStore;
      scorer: RunScorer;
      onError: (err: unknown, experimentId: string) => void;
    },
  ) {}

  /** Experiments cut off by a stop are closed as interrupted; their runs were recovered by the run service. */
  async recover(): Promise<number> {
    const left = await this.deps.store.unfinished();
    for (const r of left)
      await this.deps.store.put({ ...r, status: 'completed', interrupted: true, completedAt: Date.now() });
    return left.length;
  }

  /** The tenant's experiments of an automation, newest first, live state for running ones. */
  async list(tenant: string, automationId: string): Promise<ExperimentRecord[]> {
    return (await this.deps.store.list(tenant, automationId)).map((e) => this.active.get(e.id)?.record ?? e);
  }

  async get(tenant: string, id: string): Promise<ExperimentRecord | undefined> {
    const live = this.active.get(id)?.record;
    if (live) return live.tenant === tenant ? live : undefined;
    return this.deps.store.get(tenant, id);
  }

  /**
   * Creates the experiment and starts its first window of runs before resolving, so the
   * answer can name them. `listener`, if given, is subscribed before any run starts.
   */
  async start(args: {
    automation: AutomationRecord;
    examples: ExampleRecord[];
    concurrency: number;
    version: string | undefined;
    principal: Pick<Principal, 'tenant' | 'user'>;
    listener?: (e: ExperimentEvent | null) => void;
  }): Promise<ExperimentRecord> {
    const record: ExperimentRecord = {
      id: newExperimentId(),
      tenant: args.principal.tenant,
      automationId: args.automation.id,
      automationType: args.automation.type,
      status: args.examples.length === 0 ? 'completed' : 'queued',
      version: args.version ?? null,
      concurrency: args.concurrency,
      createdAt: Date.now(),
      completedAt: args.examples.length === 0 ? Date.now() : null,
      cancelRequestedAt: null,
      interrupted: false,
      examples: args.examples.map((e) => ({ exampleId: e.id, exampleName: e.name })),
      runs: [],
      results: {},
    };
    await this.deps.store.put(record);
    if (args.examples.length === 0) {
      args.listener?.(null);
      return record;
    }
    const active: Active = {
      record,
      cancelled: false,
      inFlight: new Set(),
      listeners: new Set(args.listener ? [args.listener] : []),
      done: Promise.resolve(),
    };
    this.active.set(record.id, active);
    let firstWindow!: () => void;
    const windowStarted = new Promise<void>((r) => (firstWindow = r));
    active.done = this.drive(active, args, firstWindow).catch((err) => this.deps.onError(err, record.id));
    await windowStarted;
    return active.record;
  }

  subscribe(id: string, listener: (e: ExperimentEvent | null) => void): () => void {
    const a = this.active.get(id);
    if (!a) {
      listener(null);
      return () => {};
    }
    a.listeners.add(listener);
    return () => a.listeners.delete(listener);
  }

  private async save(a: Active): Promise<void> {
    await this.deps.store.put(a.record);
  }

  private async drive(
    a: Active,
    args: {
      examples: ExampleRecord[];
      concurrency: number;
      version: string | undefined;
      principal: Pick<Principal, 'tenant' | 'user'>;
    },
    firstWindow: () => void,
  ): Promise<void> {
    let next = 0;
    let starting = Math.min(args.concurrency, args.examples.length);
    const started = () => {
      if (--starting === 0) firstWindow();
    };
    a.record = { ...a.record, status: 'running' };
    const lane = async (first: boolean) => {
      let isFirst = first;
      while (next < args.examples.length && !a.cancelled && !this.closing) {
        const example = args.examples[next++]!;
        let run: RunRecord;
        try {
          run = await startExampleRun(this.deps.runs, example, {
            principal: args.principal,
            trigger: 'experiment',
            batchId: a.record.id,
            ...(args.version !== undefined ? { version: args.version } : {}),
          });
        } catch (err) {
          // A run that cannot start (bad $file, queue full) is recorded as a failed result.
          a.record.results[`unstarted:${example.id}`] = {
            status: 'rejected',
            score: null,
            passed: false,
            completedAt: Date.now(),
          };
          this.deps.onError(err, a.record.id);
          if (isFirst) {
            isFirst = false;
            started();
          }
          continue;
        }
        a.inFlight.add(run.id);
        // Mutated in place (a store encodes the value when put is called), so a large experiment
        // does not copy its run list once per run.
        a.record.runs.push({
          id: run.id,
          exampleId: example.id,
          exampleName: example.name,
          createdAt: run.createdAt,
        });
        await this.save(a);
        if (isFirst) {
          isFirst = false;
          started();
        }
        if (a.cancelled) await this.deps.runs.cancel(run.id).catch(() => {});
        const finished = await this.deps.runs.waitFor(run.id, 0);
        let score: number | null = null;
        let passed = finished.status === 'completed';
        try {
          const s = await this.deps.scorer.score(finished, example);
          if (s) {
            score = s.score;
            if (s.passed !== null) passed = s.passed;
          }
        } catch (err) {
          this.deps.onError(err, a.record.id);
        }
        a.inFlight.delete(run.id);
        a.record.results[run.id] = {
          status: finished.status,
          score,
          passed,
          completedAt: finished.completedAt ?? Date.now(),
        };
        // Told before the record is saved: the run and its scores are committed already, and
        // emitting here keeps completedCount in step with the order of the lines.
        const event: ExperimentEvent = {
          type: 'run.completed',
          experimentId: a.record.id,
          runId: run.id,
          exampleId: example.id,
          exampleName: example.name,
          status: finished.status,
          score,
          passed,
          completedCount: Object.keys(a.record.results).length,
          total: a.record.examples.length,
        };
        for (const l of a.listeners) l(event);
        await this.save(a);
        await this.deps.examples
          .update(example.tenant, example.automationId, example.id, (cur) => ({
            ...cur,
            latestRunId: run.id,
          }))
          .catch(() => {});
      }
      if (isFirst) started();
    };
    try {
      await Promise.all(
        Array.from({ length: Math.max(1, Math.min(args.concurrency, args.examples.length)) }, (_, i) =>
          lane(i < starting),
        ),
      );
    } finally {
      firstWindow();
      a.record = { ...a.record, status: 'completed', completedAt: Date.now() };
      await this.save(a);
      this.active.delete(a.record.id);
      for (const l of a.listeners) l(null);
    }
  }

  /** Stops new starts and cancels runs in flight; resolves once they are terminal. */
  async cancel(tenant: string, id: string): Promise<ExperimentRecord | undefined> {
    const a = this.active.get(id);
    if (!a || a.record.tenant !== tenant) return this.deps.store.get(tenant, id);
    if (!a.cancelled) {
      a.cancelled = true;
      a.record = { ...a.record, cancelRequestedAt: Date.now() };
      await this.save(a);
    }
    await Promise.all(
      [...a.inFlight].map(async (runId) => {
        const run = await this.deps.runs.get(runId);
        if (run && !TERMINAL.has(run.status)) await this.deps.runs.cancel(runId).catch(() => {});
      }),
    );
    await a.done;
    return this.deps.store.get(tenant, id);
  }

  /** On shutdown, experiments stop like a cancel, so no lane waits on a run that will never end. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.active.values()].map((a) => this.cancel(a.record.tenant, a.record.id)));
  }
}
