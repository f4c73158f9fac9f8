// The end of a run on this node: its outcome checked (the output schema), its output files put
// where other nodes read them (RunSharing), its final record and terminal event built, and all of
// it written by the queue in one step that is also the lease check (RunQueue.completeWith), while
// readers still see the record as it was before the end (engine.ts, `shown`). A node that no
// longer holds the run writes nothing; the node that does records its end. Writes that meet a
// database outage are tried again under the one retry policy (retry.ts).

import { join } from 'node:path';
import { writeRunFile } from '../files/local-copy.js';
import type { RunOutcome } from '../executor/pool.js';
import { checkSchema, type JsonSchema } from '../evals/index.js';
import { whileUnavailable } from '../retry.js';
import type { ActiveRun, Engine } from './engine.js';
import type { Execution } from './execution.js';
import type { KeptFile, RunEnd } from './queue.js';
import type { RunRecorder } from './recorder.js';
import type { Waiters } from './waiters.js';
import { TERMINAL, type RunArtifact, type RunRecord, type RunStatus } from './types.js';

export class Completion {
  execution!: Execution;
  waiters!: Waiters;

  constructor(
    private readonly e: Engine,
    private readonly recorder: RunRecorder,
  ) {}

  /** Ends the run; tracked until its writes are done, so that closing waits for them. */
  finish(active: ActiveRun, outcome: RunOutcome): Promise<void> {
    const ending = this.end(active, outcome);
    this.e.ending.add(ending);
    const forget = () => this.e.ending.delete(ending);
    ending.then(forget, forget);
    return ending;
  }

  private async end(active: ActiveRun, outcome: RunOutcome): Promise<void> {
    if (TERMINAL.has(active.record.status) || this.e.finishing.has(active)) return;
    if (active.abandoned) return this.execution.dropAbandoned(active);
    // The output check may wait for a worker; a second end of the same run (a cancel racing the
    // completion) must not slip in meanwhile.
    this.e.finishing.add(active);
    // The execution has ended, so the run's pool thread is free: the next run is claimed now,
    // while this one's end is checked and committed (a client is answered only after that
    // commit; a crash before it leaves this run claimed under its lease, to be taken over).
    void this.execution.pump();
    const now = Date.now();
    const schemaValid =
      outcome.kind === 'completed'
        ? await this.outputValid(active.record.id, active.detail.manifest, outcome.output)
        : null;
    const status: RunStatus = outcome.kind;
    // Output files go where other nodes read them before the end is recorded, so any node
    // answers artifact downloads, ZIPs, scoring and reviews of the run.
    const { files, blobs, kept } = await this.shareOutputs(active);
    const next: RunRecord = {
      ...active.record,
      files,
      status,
      completedAt: now,
      output: outcome.kind === 'completed' ? outcome.output : null,
      error: outcome.kind === 'completed' ? null : outcome.error.message,
      errorCode: outcome.kind === 'completed' ? null : outcome.error.code,
      schemaValid,
    };
    active.beforeEnd = active.record;
    active.record = next;
    const end = this.recorder.endEvent(active, next);
    // Progress of the run that its store has not sent yet goes in the end's own statement.
    const unwritten = this.e.store.takeUnwritten(next.id);
    let writesAwaited = false;
    let stillMine = true;
    try {
      stillMine = await whileUnavailable(
        async () => {
          // The run's earlier writes land before its end: awaited here, unless the store commits
          // in the order writes are issued (then the end joins them in one commit when it can).
          if (!writesAwaited) {
            writesAwaited = true;
            if (!this.e.store.ordered) await Promise.all(active.writes);
          }
          if (active.abandoned) return false;
          return this.e.queue.completeWith(next.id, status, {
            record: next,
            detail: active.detail,
            events: [...unwritten, end],
            ...(blobs.length > 0 ? { blobs } : {}),
            ...(kept.length > 0 ? { files: kept } : {}),
          });
        },
        // An outage is waited out; a node that lost the lease meanwhile gives up, and the node
        // that takes the run over runs it again.
        () => !active.abandoned && !this.e.closing,
      );
    } catch (err) {
      this.e.log.error({ err, runId: next.id }, 'cannot store the end of a run');
    }
    if (!stillMine) {
      // No longer this node's run (given up, or taken over: then nothing was written); the node
      // that holds it records its end.
      active.abandoned = true;
      this.e.finishing.delete(active);
      return this.execution.dropAbandoned(active);
    }
    this.e.active.delete(next.id);
    this.e.tracing.ended(active.span, next);
    this.e.options.observer?.ended(next);
    this.waiters.resolve(next.id, next);
  }

  /** null without an output schema; false also when the check could not finish (logged). */
  private async outputValid(
    runId: string,
    manifest: Record<string, unknown>,
    output: unknown,
  ): Promise<boolean | null> {
    const schema = manifest['outputSchema'];
    if (!schema || typeof schema !== 'object') return null;
    const outcome = await checkSchema(schema as JsonSchema, output, this.e.options.schemaPool);
    if (outcome.ok) return outcome.valid;
    this.e.log.warn({ runId, reason: outcome.message }, 'cannot check a run output against its schema');
    return false;
  }

  /**
   * The run's files, each output file put where other nodes read it (named by its sha256 when it
   * was). A file that cannot be put there is left without a blob (logged): it stays
   * downloadable from this node only. The bytes of a file the worker kept off the disk that no
   * shared store took are stored with the end (`kept`, RunEnd.files).
   */
  private async shareOutputs(
    active: ActiveRun,
  ): Promise<{ files: RunArtifact[]; blobs: NonNullable<RunEnd['blobs']>; kept: KeptFile[] }> {
    const out: RunArtifact[] = [];
    const blobs: NonNullable<RunEnd['blobs']> = [];
    const kept: KeptFile[] = [];
    for (const f of active.record.files) {
      if (f.role !== 'output' || f.sha256) {
        out.push(f);
        continue;
      }
      const content = active.kept.get(f.path);
      const path = join(this.e.runDir(active.record.id), f.path);
      try {
        const shared = await whileUnavailable(
          () => this.e.options.sharing.putOutput(path, content),
          () => !this.e.closing && !active.abandoned,
        );
        if (shared?.content) blobs.push({ sha256: shared.sha256, content: shared.content });
        else if (!shared && content) kept.push({ path: f.path, content });
        out.push(shared ? { ...f, sha256: shared.sha256 } : f);
      } catch (err) {
        this.e.log.warn({ err, runId: active.record.id, path: f.path }, 'cannot share an output file');
        // A file the worker kept off the disk is written to this node's folder instead.
        if (content) await writeRunFile(path, content).catch(() => undefined);
        out.push(f);
      }
    }
    return { files: out, blobs, kept };
  }
}
