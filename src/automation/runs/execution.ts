// Execution of runs on this node: claims from the queue while the pool has room, a claimed run
// made live (a takeover starts it again from the start), prepared (its pinned version, its input
// files) and submitted to the pool, and what its worker reports recorded as it comes. A run that
// is no longer this node's (lease lost, node shutting down) is abandoned: stopped, and nothing
// more recorded here.

import { join } from 'node:path';
import { RunFailure } from '../executor/failure.js';
import type { InputFileRef, WorkerMessage } from '../executor/protocol.js';
import { localCopy } from '../files/local-copy.js';
import { packagePath } from '../registry/repository.js';
import type { AutomationRecord } from '../registry/service.js';
import type { Manifest } from '../registry/manifest.js';
import { isUnavailable } from '../retry.js';
import type { Completion } from './completion.js';
import type { ActiveRun, AdmittedRun, Engine } from './engine.js';
import { OUTPUT_DIR, outputPath } from './folder.js';
import type { QueueClaim } from './queue.js';
import type { EventFields, RunRecorder } from './recorder.js';
import type { Waiters } from './waiters.js';
import { emptyDetail, emptyUsage, TERMINAL, type RunDetail, type RunEvent, type RunRecord } from './types.js';

export class Execution {
  private pumping = false;
  private pumpAgain = false;
  /** Slots taken by runs admitted here that are being stored claimed for this node (reserve). */
  private reserved = 0;
  /**
   * This node's last claim found the queue empty and no wake came since (runs are queued with a
   * wake): a run admitted here now has no older queued run to wait behind.
   */
  private queueEmpty = false;
  completion!: Completion;
  waiters!: Waiters;

  constructor(
    private readonly e: Engine,
    private readonly recorder: RunRecorder,
  ) {}

  /** Runs may be claimable (the queue's wake): claims, and takes no run past the queue meanwhile. */
  wake(): void {
    this.queueEmpty = false;
    void this.pump();
  }

  /** Claims runs while this node has room (on start, wake, and each run's end). */
  async pump(): Promise<void> {
    if (this.e.closing) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        const room = this.room();
        if (room <= 0) break;
        const claims = await this.e.queue.claim(room);
        // Empty unless a wake came while the claim was in flight (it asks for another round).
        if (claims.length < room && !this.pumpAgain) this.queueEmpty = true;
        await Promise.all(claims.map((c) => this.adopt(c)));
        // A full claim may have left more behind.
        if (claims.length === room) this.pumpAgain = true;
      } while (this.pumpAgain && !this.e.closing);
    } catch (err) {
      // The database is unreachable: the queue wakes this node again once its listener is back.
      this.e.log.warn({ err }, 'cannot claim runs from the queue');
    } finally {
      this.pumping = false;
    }
  }

  /** How many more runs this node may hold now (one per pool thread, engine.ts `capacity`). */
  private room(): number {
    // A run whose end is being recorded no longer holds a pool thread: its slot is free.
    let held = 0;
    for (const a of this.e.active.values()) if (!this.e.finishing.has(a)) held++;
    return this.e.options.capacity - held - this.reserved;
  }

  /**
   * Takes a slot for a run admitted here, to store it claimed by this node (RunQueue.createClaimed).
   * False when the node has no room, or is claiming, or has heard of queued runs since its last
   * claim (the new one goes behind them). Each true is followed by one `settle`.
   */
  reserve(): boolean {
    if (!this.canTake()) return false;
    this.reserved++;
    return true;
  }

  /** Whether reserve() would take a slot now. */
  canTake(): boolean {
    return !this.e.closing && !this.pumping && this.queueEmpty && this.room() > 0;
  }

  /**
   * The reserved slot's run is stored: claimed by this node (it is made live here from what
   * admission has at hand, engine.ts `admitted`), or queued (undefined), or not stored (an error:
   * undefined too). The slot is free again either way.
   */
  async settle(claim: QueueClaim | undefined): Promise<void> {
    this.reserved--;
    if (claim && !this.e.closing) return this.adopt(claim);
    // Closing: the run stays claimed until its lease lapses and another node takes it over (the
    // same as a run this node claimed just before its close).
    if (claim) this.e.queue.forget(claim.runId);
    void this.pump();
  }

  /**
   * A claimed run becomes this node's live run and is executed here; `interrupted`: a run the
   * previous process of this node was executing when it stopped, which ends failed.
   */
  async adopt(claim: QueueClaim, interrupted = false): Promise<void> {
    const id = claim.runId;
    const held = claim.takeover || interrupted || claim.attempt > 1 ? undefined : this.e.admitted.get(id);
    if (held) {
      // Admitted here a moment ago: what admission wrote is at hand, not read back.
      const detail: RunDetail = { ...held.detail, steps: [], trace: [], usage: emptyUsage() };
      const active = this.live(claim, held.record, detail, held.seq, held.at);
      active.executed = this.execute(active, claim, held);
      return;
    }
    const { queue } = this.e;
    let record: RunRecord | undefined;
    let stored: RunDetail | undefined;
    try {
      [record, stored] = claim.stored
        ? [claim.stored.record, claim.stored.detail]
        : await Promise.all([this.e.store.get(id), this.e.store.getDetail(id)]);
      if (!record) {
        // Cannot happen: a run is stored and queued in one step. It is left held, not looped on.
        this.e.log.error({ runId: id }, 'a claimed run is not stored');
        return;
      }
      if (TERMINAL.has(record.status)) {
        // Its end was stored but the node that ran it stopped before marking it done.
        await queue.completeWith(id, record.status, { record, detail: stored ?? emptyDetail(), events: [] });
        return;
      }
    } catch (err) {
      this.e.log.warn({ err, runId: id }, 'cannot read a claimed run; it goes back to the queue');
      if (!(await queue.release(id).catch(() => false))) queue.forget(id);
      return;
    }
    const last = claim.stored ?? lastEvent(await this.e.store.events(id).catch(() => [] as RunEvent[]));
    const base = stored ?? emptyDetail();
    const detail: RunDetail = claim.takeover ? { ...base, steps: [], trace: [], usage: emptyUsage() } : base;
    const active = this.live(claim, record, detail, last.lastSeq, last.lastEventMs);
    if (interrupted) {
      active.executed = this.completion.finish(active, {
        kind: 'failed',
        error: new RunFailure('service_interrupted', 'the service stopped while the run was in flight'),
      });
      return;
    }
    if (claim.takeover) {
      // Run again from the start: what the previous node recorded of its execution is replaced.
      this.recorder.change(active, {
        ...record,
        status: 'pending',
        startedAt: null,
        output: null,
        files: record.files.filter((f) => f.role === 'input'),
      });
      this.e.options.observer?.takenOver(active.record);
      this.recorder.event(active, 'run.taken_over', {
        status: 'pending',
        message: `the lease of node ${claim.previousNode ?? 'unknown'} expired; run again on node ${queue.nodeId}`,
        metadata: { previousNode: claim.previousNode, node: queue.nodeId, attempt: claim.attempt },
      });
    }
    // Claiming goes on while the run executes.
    active.executed = this.execute(active, claim, undefined);
  }

  /** The claimed run made this node's live run. */
  private live(
    claim: QueueClaim,
    record: RunRecord,
    detail: RunDetail,
    seq: number,
    lastEventMs: number,
  ): ActiveRun {
    const active: ActiveRun = {
      record,
      detail,
      seq,
      handle: undefined,
      cancelledBeforeSubmit: false,
      writes: [],
      lastEventMs,
      abandoned: false,
      executed: Promise.resolve(),
      span: this.e.tracing.execution(record, claim.attempt, claim.takeover),
      kept: new Map(),
    };
    this.e.active.set(claim.runId, active);
    return active;
  }

  /** `held`: the run as admitted here (its automation and manifest are known). */
  private async execute(active: ActiveRun, claim: QueueClaim, held: AdmittedRun | undefined): Promise<void> {
    const id = claim.runId;
    const { record, detail } = active;
    try {
      if (claim.cancelRequested || this.e.cancelAsked.delete(id)) {
        active.record = {
          ...active.record,
          cancelRequestedAt: active.record.cancelRequestedAt ?? Date.now(),
        };
        active.cancelledBeforeSubmit = true;
        await this.completion.finish(active, {
          kind: 'cancelled',
          error: new RunFailure('cancelled', 'cancelled before it started'),
        });
        return;
      }
      const automation = held?.automation ?? (await this.e.registry.get(record.automationId));
      if (!automation)
        throw new RunFailure('version_unavailable', `automation ${record.automationId} is unknown`);
      const manifest =
        held?.manifest ??
        (await this.e.registry.manifestAt(record.git.commitSha, automation.type, automation.slug));
      // The node that received the run wrote its inputs here only if it is this node. Nothing
      // else is made here: the worker makes output/ when the run writes a file.
      const dir = this.e.runDir(id);
      for (const f of detail.input.files)
        if (!(await localCopy(this.e.options.blobs, join(dir, f.path), f.sha256)))
          throw new RunFailure('input_unavailable', `input file ${f.name} is not in the blob store`);
      await this.dispatch(active, automation, manifest);
    } catch (err) {
      if (isUnavailable(err) && !this.e.closing) {
        // The database went away while the run was being prepared: not the run's failure. It
        // is given up here and run again after a takeover.
        this.abandon(active, 'the database is unavailable; the run will be taken over');
        return this.dropAbandoned(active);
      }
      await this.completion.finish(active, {
        kind: 'failed',
        error:
          err instanceof RunFailure
            ? err
            : new RunFailure('version_unavailable', `cannot prepare the run: ${(err as Error).message}`),
      });
    }
  }

  private async dispatch(active: ActiveRun, automation: AutomationRecord, manifest: Manifest): Promise<void> {
    const { record, detail } = active;
    let packageDir: string;
    try {
      packageDir = await this.e.registry.repo.materialise(
        record.git.commitSha,
        packagePath(automation.type, automation.slug),
      );
    } catch (err) {
      await this.completion.finish(active, {
        kind: 'failed',
        error: new RunFailure(
          'version_unavailable',
          `cannot load version ${record.version}: ${(err as Error).message}`,
        ),
      });
      return;
    }
    if (active.abandoned) return this.dropAbandoned(active);
    if (active.cancelledBeforeSubmit || TERMINAL.has(active.record.status)) return;
    const files: InputFileRef[] = detail.input.files.map((f) => ({
      name: f.name,
      field: f.field,
      path: join(this.e.runDir(record.id), f.path),
      contentType: f.contentType,
      size: f.size,
    }));
    active.handle = this.e.pool.submit(
      {
        runId: record.id,
        kind: record.type,
        packageDir,
        entry: manifest.entry,
        manifest: manifest.raw,
        input: detail.input.args,
        metadata: detail.input.metadata,
        files,
        overrides: detail.overrides,
        outputDir: join(this.e.runDir(record.id), OUTPUT_DIR),
        providers: this.e.options.providers,
      },
      (msg) => this.onMessage(active, msg),
      record.timeoutMs,
    );
    const outcome = await active.handle.outcome;
    await this.completion.finish(active, outcome);
  }

  private onMessage(active: ActiveRun, msg: WorkerMessage): void {
    if (TERMINAL.has(active.record.status)) return;
    const detail = active.detail;
    switch (msg.t) {
      case 'started': {
        this.recorder.change(active, { ...active.record, status: 'running', startedAt: Date.parse(msg.at) });
        this.recorder.event(active, 'run.started', { status: 'running' }, msg.at);
        this.e.tracing.event(active.span, 'run.started', msg.at);
        this.e.options.observer?.started(active.record);
        break;
      }
      case 'event': {
        const extra: EventFields = {};
        if (msg.message !== undefined) extra.message = msg.message;
        if (msg.metadata !== undefined) extra.metadata = msg.metadata;
        this.recorder.event(active, msg.type, extra, msg.at);
        this.e.tracing.event(active.span, msg.type, msg.at);
        if (msg.type === 'step.started' || msg.type === 'tool.called')
          detail.trace.push({ type: msg.type, at: msg.at, ...msg.metadata });
        break;
      }
      case 'step': {
        detail.steps.push(msg.step);
        this.e.tracing.step(active.span, msg.step);
        const type =
          msg.step.status === 'failed'
            ? 'step.failed'
            : msg.step.status === 'overridden'
              ? 'step.overridden'
              : msg.step.status === 'cancelled'
                ? 'step.cancelled'
                : 'step.completed';
        const extra: EventFields = {
          metadata: { stepName: msg.step.name, index: msg.step.index, durationMs: msg.step.durationMs },
        };
        if (msg.step.error !== undefined) extra.message = msg.step.error;
        this.recorder.event(active, type, extra, msg.step.completedAt);
        const trace: Record<string, unknown> = {
          type: 'step',
          phase: 'execute',
          stepName: msg.step.name,
          status: msg.step.status,
          startedAt: msg.step.startedAt,
          completedAt: msg.step.completedAt,
          durationMs: msg.step.durationMs,
        };
        if (msg.step.error !== undefined) trace['message'] = msg.step.error;
        detail.trace.push(trace);
        break;
      }
      case 'trace':
        detail.trace.push(msg.entry);
        break;
      case 'usage': {
        const u = detail.usage;
        const d = msg.delta;
        u.tokens.input += d.tokens?.input ?? 0;
        u.tokens.output += d.tokens?.output ?? 0;
        u.tokens.cacheRead += d.tokens?.cacheRead ?? 0;
        u.tokens.cacheWrite += d.tokens?.cacheWrite ?? 0;
        u.creditsCharged += d.credits ?? 0;
        u.llmCallCount += d.llmCalls ?? 0;
        u.agentTurns += d.agentTurns ?? 0;
        u.ocrPagesProcessed += d.ocrPages ?? 0;
        break;
      }
      case 'file': {
        const path = outputPath(msg.file.name);
        const files = active.record.files.filter((f) => f.path !== path);
        files.push({
          name: msg.file.name,
          role: 'output',
          path,
          stepName: msg.file.stepName ?? null,
          contentType: msg.file.contentType,
          size: msg.file.size,
        });
        active.record = { ...active.record, files };
        // The latest version of the file wins: its bytes here, or the file in the run's folder.
        const content = msg.file.content;
        if (content)
          active.kept.set(path, Buffer.from(content.buffer, content.byteOffset, content.byteLength));
        else active.kept.delete(path);
        this.recorder.event(active, 'artifact.created', { metadata: { path, size: msg.file.size } });
        break;
      }
      case 'done':
        break;
    }
  }

  /**
   * The run is no longer this node's; its execution stops and nothing more is recorded here.
   * Callers waiting here for it go on waiting for its end on any node.
   */
  abandon(active: ActiveRun, reason: string): void {
    if (active.abandoned) return;
    active.abandoned = true;
    this.e.log.warn({ runId: active.record.id }, reason);
    active.handle?.cancel(reason);
  }

  dropAbandoned(active: ActiveRun): void {
    const id = active.record.id;
    this.e.tracing.abandoned(active.span);
    if (this.e.active.get(id) === active) this.e.active.delete(id);
    // Its lease lapses and a claim takes it over (at shutdown close() releases it instead).
    if (!this.e.closing) this.e.queue.forget(id);
    this.waiters.handOver(id, active.record);
    if (!this.e.closing) void this.pump();
  }
}

/** The seq and time of a run's last event. */
function lastEvent(events: RunEvent[]): { lastSeq: number; lastEventMs: number } {
  return {
    lastSeq: events.reduce((m, e) => Math.max(m, e.seq), 0),
    lastEventMs: events.reduce((m, e) => Math.max(m, Date.parse(e.timestamp)), 0),
  };
}
