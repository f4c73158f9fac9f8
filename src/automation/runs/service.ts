// The run service: starts runs (pinned to a commit), feeds them to the pool, records what they
// report, cancels them and lets callers wait for them. Live state of unfinished runs is kept
// in memory and written through; the stored record is the truth once a run is terminal.

import { createReadStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../core/log.js';
import type { Principal } from '../../core/auth/types.js';
import type { RunPool, RunHandle, RunOutcome } from '../executor/pool.js';
import { RunFailure } from '../executor/failure.js';
import type { InputFileRef, ProviderSettings, WorkerMessage } from '../executor/protocol.js';
import { invalid, notFound, ApiError } from '../errors.js';
import { checkRelativePath } from '../datasets/paths.js';
import type { BlobStore } from '../files/blob-store.js';
import { snapshot } from '../files/blobs.js';
import { localCopy, runFilePath } from '../files/local-copy.js';
import { parseTarget, type AutomationRegistry, type AutomationRecord } from '../registry/service.js';
import { packagePath } from '../registry/repository.js';
import type { Manifest } from '../registry/manifest.js';
import type { BuildEntry } from '../archives/zip-writer.js';
import { checkSchema, type JsonSchema, type ScriptPool } from '../evals/index.js';
import { newRunId, sampleRank } from './ids.js';
import { listRuns, type RunListPage, type RunListQuery } from './list.js';
import type { RunStore } from './store.js';
import type { RunObserver } from './metrics.js';
import type { QueueClaim, SharedRunQueue } from './queue.js';
import {
  emptyDetail,
  emptyUsage,
  TERMINAL,
  type RunDetail,
  type RunArtifact,
  type RunEvent,
  type RunGit,
  type RunInputFile,
  type RunRecord,
  type RunStatus,
} from './types.js';

/** Content types stored as-is in a ZIP (already compressed). */
const COMPRESSED = /^(image\/(png|jpeg|gif|webp)|application\/(zip|gzip|pdf)|video\/|audio\/)/;

/** An input file of a run to start, to be copied into the run's own folder. */
export interface StagedInputFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  /**
   * Where the bytes are: the blob store (by sha256: a stored file, an example's file), or a
   * local file (an upload's temp file, the input of the run a rerun copies).
   */
  source: 'blob' | { path: string };
  fileId: string | null;
}

export interface StartRunRequest {
  target: string;
  version?: string | undefined;
  input?: unknown;
  files?: StagedInputFile[];
  overrides?: { steps?: Record<string, unknown> };
  metadata?: Record<string, unknown>;
  principal: Pick<Principal, 'tenant' | 'user'>;
  trigger?: string;
  batchId?: string | null;
  exampleId?: string | null;
  /** Internal: rerun lineage and pinning. */
  previousRun?: RunRecord;
  pinnedGit?: RunGit & { version: string; versionId: string | null };
}

export interface CancelResult {
  run: RunRecord;
  state: 'cancelled' | 'requested' | 'already_terminal';
  wasStatus: RunStatus;
}

interface ActiveRun {
  record: RunRecord;
  detail: RunDetail;
  seq: number;
  handle: RunHandle | undefined;
  cancelledBeforeSubmit: boolean;
  writes: Promise<unknown>[];
  lastEventMs: number;
  /**
   * Shared queue only: the run is no longer this node's (its lease was lost, or the node shuts
   * down and gave it back). Its execution is stopped and its outcome is not recorded here.
   */
  abandoned?: boolean;
  /** Shared queue only: settles when this node's execution of the run has ended. */
  executed?: Promise<void>;
  /** The live record as it was before the end, shown to readers while the end is written. */
  beforeEnd?: RunRecord;
}

/**
 * What readers see of a live run: its record, or while its end is being written the record as it
 * was before, so that a run reads as ended (here or on any node) only once its end, last events,
 * detail and files are stored.
 */
function shown(active: ActiveRun): RunRecord {
  return TERMINAL.has(active.record.status) ? (active.beforeEnd ?? active.record) : active.record;
}

export interface RunServiceOptions {
  runsDir: string;
  maxQueuedRuns: number;
  providers: ProviderSettings;
  log: Logger;
  /** Where the input files that name a blob come from. */
  blobs: BlobStore;
  /** Where input/output schemas with `pattern` are checked under a time limit; without it
   *  they are validated inline (tests with trusted manifests). */
  schemaPool?: ScriptPool;
  /**
   * The run queue shared with other nodes (PostgreSQL). With it a started run is queued and
   * executed by whichever node claims it; this node claims up to `capacity` runs at once.
   */
  queue?: SharedRunQueue;
  capacity?: number;
  /** Told of runs starting, ending and being taken over (the service's metrics). */
  observer?: RunObserver;
}

export class RunService {
  private readonly active = new Map<string, ActiveRun>();
  private readonly waiters = new Map<string, Set<(run: RunRecord) => void>>();
  private readonly finishing = new WeakSet<ActiveRun>();
  private closing = false;
  private readonly queue: SharedRunQueue | undefined;
  private pumping = false;
  private pumpAgain = false;
  /** Cancels heard for runs being adopted (claimed, not yet in `active`). */
  private readonly cancelAsked = new Set<string>();

  constructor(
    readonly store: RunStore,
    private readonly registry: AutomationRegistry,
    private readonly pool: RunPool,
    private readonly options: RunServiceOptions,
  ) {
    this.queue = options.queue;
    if (this.queue) {
      this.queue.onWake(() => void this.pump());
      this.queue.onCancel((runId) => {
        if (this.active.has(runId)) this.cancel(runId).catch(() => undefined);
        else this.cancelAsked.add(runId);
      });
      this.queue.onLost((runId) => {
        const active = this.active.get(runId);
        if (active) this.abandon(active, 'the run was taken over by another node (lease lost)');
      });
    }
  }

  /** Run files are shared with other nodes through the blob store (with the shared queue). */
  get sharesFiles(): boolean {
    return this.queue !== undefined;
  }

  runDir(runId: string): string {
    return join(this.options.runsDir, runId);
  }

  /**
   * A file of the run on this node's disk: here already, or fetched from the shared blob store
   * (a run executed or reviewed on another node); undefined when neither has it.
   */
  async localFile(
    run: Pick<RunRecord, 'id'>,
    file: { path: string; sha256?: string | undefined },
  ): Promise<string | undefined> {
    const path = runFilePath(this.runDir(run.id), file, this.sharesFiles);
    return (await localCopy(this.options.blobs, path, file.sha256)) ? path : undefined;
  }

  /** The stored file behind an artifact path as listed (`output/report.md`), or an output's name. */
  async artifact(run: RunRecord, path: string): Promise<{ file: RunArtifact; absPath: string } | undefined> {
    const file =
      run.files.find((f) => f.path === path) ?? run.files.find((f) => f.role === 'output' && f.name === path);
    const absPath = file && (await this.localFile(run, file));
    return file && absPath ? { file, absPath } : undefined;
  }

  /**
   * The entries of an artifact ZIP: the output files, and for the review bundle (`expected`
   * given: the review's corrected files) expected/ too. A file neither here nor in the blob
   * store is left out.
   */
  async zipEntries(
    run: RunRecord,
    expected?: readonly { name: string; size: number; sha256?: string | undefined }[],
  ): Promise<{ entries: BuildEntry[]; bytes: number }> {
    const review = expected !== undefined;
    const entries: BuildEntry[] = [];
    let bytes = 0;
    for (const f of run.files.filter((x) => x.role === 'output')) {
      const file = await this.localFile(run, f);
      if (!file) continue;
      const name = review ? `output/${f.name}` : f.name;
      entries.push({ name, file, level: COMPRESSED.test(f.contentType) ? 0 : 6 });
      bytes += f.size;
    }
    for (const f of expected ?? []) {
      const file = await this.localFile(run, { path: `expected/${f.name}`, sha256: f.sha256 });
      if (!file) continue;
      entries.push({ name: `expected/${f.name}`, file, level: 6 });
      bytes += f.size;
    }
    return { entries, bytes };
  }

  /** The live record of an unfinished run (see `shown`), else the stored one. */
  async get(id: string): Promise<RunRecord | undefined> {
    const active = this.active.get(id);
    return active ? shown(active) : this.store.get(id);
  }

  async getDetail(id: string): Promise<RunDetail | undefined> {
    return this.active.get(id)?.detail ?? (await this.store.getDetail(id));
  }

  /** The detail of a run the caller holds (empty for a run whose detail was never written). */
  async detailOf(run: RunRecord): Promise<RunDetail> {
    return (await this.getDetail(run.id)) ?? emptyDetail();
  }

  events(id: string): Promise<RunEvent[]> {
    return this.store.events(id);
  }

  /** Overlay for listings: live records of unended runs win over what was last committed. */
  readonly overlay = (run: RunRecord): RunRecord => {
    const active = this.active.get(run.id);
    return active ? shown(active) : run;
  };

  /** A page of runs from the store, live records laid over it (see list.ts). */
  list(q: RunListQuery): Promise<RunListPage> {
    return listRuns(this.store, q, this.overlay);
  }

  get queued(): number {
    let n = 0;
    for (const a of this.active.values())
      if (a.record.status === 'pending' || a.record.status === 'created') n++;
    return n;
  }

  async start(req: StartRunRequest): Promise<RunRecord> {
    if (this.closing) throw new ApiError(503, 'shutting_down', 'the service is shutting down');
    const target = parseTarget(req.target);
    const targetVersion = target.version;
    if (targetVersion !== undefined && req.version !== undefined && targetVersion !== req.version) {
      throw invalid(
        'version',
        `target names version ${targetVersion} but the version parameter says ${req.version}`,
      );
    }
    const automation = await this.registry.resolveTarget(target);
    if (!automation) throw notFound(`automation ${JSON.stringify(req.target)}`, 'target');
    if (automation.status !== 'active')
      throw new ApiError(403, 'automation_archived', `automation ${automation.slug} is archived`);

    let git: RunGit;
    let version: string;
    let versionId: string | null;
    if (req.pinnedGit) {
      ({ version, versionId } = req.pinnedGit);
      git = {
        requestedRef: req.pinnedGit.requestedRef,
        resolvedRef: req.pinnedGit.resolvedRef,
        resolvedTag: req.pinnedGit.resolvedTag,
        commitSha: req.pinnedGit.commitSha,
      };
    } else {
      const resolved = await this.registry.resolveVersion(
        automation,
        req.version ?? targetVersion ?? 'latest',
      );
      git = {
        requestedRef: resolved.requestedRef,
        resolvedRef: resolved.resolvedRef,
        resolvedTag: resolved.resolvedTag,
        commitSha: resolved.commitSha,
      };
      version = resolved.version;
      versionId = resolved.resolvedTag
        ? ((await this.registry.versions(automation.id)).find((v) => v.sourceRef === resolved.resolvedTag)
            ?.id ?? null)
        : null;
    }
    const manifest = await this.registry.manifestAt(git.commitSha, automation.type, automation.slug);
    // Another node may run it: the pinned commit must be in the shared database first.
    if (this.queue) await this.registry.publish(git.commitSha);
    const trigger = req.trigger ?? 'api';
    // The CLI calls the same API: the api trigger governs both.
    if ((trigger === 'api' || trigger === 'cli') && !manifest.triggers.api) {
      throw new ApiError(403, 'api_trigger_disabled', `the api trigger of ${automation.slug} is disabled`, [
        { field: 'target', message: 'api trigger disabled in the manifest', code: 'api_trigger_disabled' },
      ]);
    }
    const args = req.input ?? {};
    await this.validateInput(automation, manifest, args);
    // With a shared queue the bound is the cluster's: runs waiting for any node.
    const queued = this.queue ? await this.queue.queuedCount(this.options.maxQueuedRuns) : this.queued;
    if (queued >= this.options.maxQueuedRuns) {
      throw new ApiError(429, 'too_many_queued_runs', `${queued} runs are queued; try again shortly`, [], {
        'retry-after': '1',
      });
    }

    // Every caller's input files land at input/<field>/<filename> in the run's folder; a field or
    // name that could climb out of it is refused here whatever the caller checked.
    for (const f of req.files ?? []) {
      const problem = checkRelativePath(`${f.field}/${f.filename}`);
      if (problem)
        throw invalid(`files.${f.field}`, `unsafe input file ${f.field}/${f.filename}: ${problem}`);
    }
    // With a shared queue another node may execute the run: every input file is put in the
    // (shared) blob store, from which the claiming node copies it by its sha256.
    if (this.queue)
      for (const f of req.files ?? [])
        if (f.source !== 'blob') await this.options.blobs.write(createReadStream(f.source.path));
    const now = Date.now();
    const id = newRunId(now);
    const dir = this.runDir(id);
    await mkdir(join(dir, 'output'), { recursive: true });
    const inputFiles: RunInputFile[] = [];
    for (const f of req.files ?? []) {
      const rel = `input/${f.field}/${f.filename}`;
      const target = join(dir, rel);
      if (f.source === 'blob') await this.options.blobs.copyTo(f.sha256, target);
      else await snapshot(f.source.path, target);
      inputFiles.push({
        field: f.field,
        name: `${f.field}/${f.filename}`,
        filename: f.filename,
        contentType: f.contentType,
        size: f.size,
        sha256: f.sha256,
        fileId: f.fileId,
        path: rel,
      });
    }
    const previous = req.previousRun;
    const record: RunRecord = {
      id,
      tenant: req.principal.tenant,
      type: automation.type,
      automationId: automation.id,
      slug: automation.slug,
      name: manifest.name,
      version,
      versionId,
      git,
      model: manifest.model,
      status: 'pending',
      createdAt: now,
      startedAt: null,
      completedAt: null,
      cancelRequestedAt: null,
      sampleRank: sampleRank(req.principal.tenant, id),
      trigger: { type: trigger, by: req.principal.user || '__system__' },
      batchId: req.batchId ?? null,
      exampleId: req.exampleId ?? null,
      output: null,
      error: null,
      files: inputFiles.map((f) => ({
        name: f.name,
        role: 'input' as const,
        path: f.path,
        stepName: null,
        contentType: f.contentType,
        size: f.size,
        sha256: f.sha256,
      })),
      schemaValid: null,
      retry: {
        number: previous ? previous.retry.number + 1 : 0,
        previousRunId: previous?.id ?? null,
        nextRunId: null,
      },
      review: null,
      timeoutMs: manifest.timeoutMs,
    };
    const detail: RunDetail = {
      input: { args, files: inputFiles, metadata: req.metadata ?? {} },
      overrides: req.overrides ?? {},
      steps: [],
      trace: [],
      usage: emptyUsage(),
      manifest: manifest.raw,
    };
    const iso = new Date(now).toISOString();
    const events: RunEvent[] = [
      {
        seq: 1,
        type: 'run.created',
        timestamp: iso,
        status: 'created',
        metadata: { version, commitSha: git.commitSha, trigger },
      },
      { seq: 2, type: 'run.queued', timestamp: iso, status: 'pending' },
    ];
    // The run starts loading while its record commits; the caller is answered only after the
    // commit, and finish() waits for it too (it is the first of the run's writes).
    if (this.queue) return this.startQueued(record, detail, events, previous);
    const committed = this.store.create(record, detail, events);
    const active: ActiveRun = {
      record,
      detail,
      seq: 2,
      handle: undefined,
      cancelledBeforeSubmit: false,
      writes: [committed],
      lastEventMs: now,
    };
    this.active.set(id, active);
    void this.dispatch(active, automation, manifest);
    try {
      await committed;
    } catch (err) {
      active.cancelledBeforeSubmit = true;
      active.handle?.cancel('the run could not be stored');
      this.active.delete(id);
      throw persistenceError(err);
    }
    await this.linkRetry(previous, id);
    return (await this.get(id)) ?? record;
  }

  private async linkRetry(previous: RunRecord | undefined, id: string): Promise<void> {
    if (!previous) return;
    const prevNow = (await this.get(previous.id)) ?? previous;
    const updated = { ...prevNow, retry: { ...prevNow.retry, nextRunId: id } };
    const live = this.active.get(previous.id);
    if (live) live.record = updated;
    else await this.store.update(prevNow, updated);
  }

  /** Shared queue: the run is stored, then queued; whichever node claims it runs it. */
  private async startQueued(
    record: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    previous: RunRecord | undefined,
  ): Promise<RunRecord> {
    const queue = this.queue!;
    try {
      // One commit where the queue can do both (PostgreSQL), else the create, then the enqueue.
      if (queue.createQueued) await queue.createQueued(record, detail, events);
      else await this.store.create(record, detail, events);
    } catch (err) {
      throw persistenceError(err);
    }
    if (!queue.createQueued) await queue.enqueue(record.id);
    await this.linkRetry(previous, record.id);
    return (await this.get(record.id)) ?? record;
  }

  // ajv compiles `pattern` into a backtracking RegExp the automation's author wrote; schemas
  // with patterns are checked in the evaluator pool so one cannot stall this thread.
  private async validateInput(
    automation: AutomationRecord,
    manifest: Manifest,
    args: unknown,
  ): Promise<void> {
    if (!manifest.inputSchema) return;
    const outcome = await checkSchema(manifest.inputSchema, args, this.options.schemaPool);
    if (!outcome.ok) {
      const message = `the input could not be checked against the input schema of ${automation.slug}: ${outcome.message}`;
      throw new ApiError(422, 'input_schema_failed', message, [
        { field: 'input', message, code: 'input_schema_failed' },
      ]);
    }
    if (!outcome.valid) {
      const issues = outcome.issues.map((e) => {
        const path = e.instancePath.split('/').filter(Boolean).join('.');
        const field = ['input', path, e.missingProperty].filter(Boolean).join('.');
        return { field, message: e.message, code: 'invalid_value' };
      });
      throw new ApiError(
        400,
        'invalid_input',
        `input does not match the input schema of ${automation.slug}`,
        issues,
      );
    }
  }

  /** null without an output schema; false also when the check could not finish (logged). */
  private async outputValid(
    runId: string,
    manifest: Record<string, unknown>,
    output: unknown,
  ): Promise<boolean | null> {
    const schema = manifest['outputSchema'];
    if (!schema || typeof schema !== 'object') return null;
    const outcome = await checkSchema(schema as JsonSchema, output, this.options.schemaPool);
    if (outcome.ok) return outcome.valid;
    this.options.log.warn({ runId, reason: outcome.message }, 'cannot check a run output against its schema');
    return false;
  }

  private async dispatch(active: ActiveRun, automation: AutomationRecord, manifest: Manifest): Promise<void> {
    const { record, detail } = active;
    let packageDir: string;
    try {
      packageDir = await this.registry.repo.materialise(
        record.git.commitSha,
        packagePath(automation.type, automation.slug),
      );
    } catch (err) {
      await this.finish(active, {
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
      path: join(this.runDir(record.id), f.path),
      contentType: f.contentType,
      size: f.size,
    }));
    active.handle = this.pool.submit(
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
        outputDir: join(this.runDir(record.id), 'output'),
        providers: this.options.providers,
      },
      (msg) => this.onMessage(active, msg),
      record.timeoutMs,
    );
    const outcome = await active.handle.outcome;
    await this.finish(active, outcome);
  }

  private event(
    active: ActiveRun,
    type: string,
    extra: Omit<RunEvent, 'seq' | 'type' | 'timestamp'> = {},
    at?: string,
  ): void {
    track(active, this.store.appendEvent(active.record.id, nextEvent(active, type, extra, at)));
  }

  private onMessage(active: ActiveRun, msg: WorkerMessage): void {
    if (TERMINAL.has(active.record.status)) return;
    const detail = active.detail;
    switch (msg.t) {
      case 'started': {
        const previous = active.record;
        active.record = { ...previous, status: 'running', startedAt: Date.parse(msg.at) };
        track(active, this.store.update(previous, active.record));
        this.event(active, 'run.started', { status: 'running' }, msg.at);
        this.options.observer?.started(active.record);
        break;
      }
      case 'event': {
        const extra: Omit<RunEvent, 'seq' | 'type' | 'timestamp'> = {};
        if (msg.message !== undefined) extra.message = msg.message;
        if (msg.metadata !== undefined) extra.metadata = msg.metadata;
        this.event(active, msg.type, extra, msg.at);
        if (msg.type === 'step.started' || msg.type === 'tool.called')
          detail.trace.push({ type: msg.type, at: msg.at, ...msg.metadata });
        break;
      }
      case 'step': {
        detail.steps.push(msg.step);
        const type =
          msg.step.status === 'failed'
            ? 'step.failed'
            : msg.step.status === 'overridden'
              ? 'step.overridden'
              : msg.step.status === 'cancelled'
                ? 'step.cancelled'
                : 'step.completed';
        const extra: Omit<RunEvent, 'seq' | 'type' | 'timestamp'> = {
          metadata: { stepName: msg.step.name, index: msg.step.index, durationMs: msg.step.durationMs },
        };
        if (msg.step.error !== undefined) extra.message = msg.step.error;
        this.event(active, type, extra, msg.step.completedAt);
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
        const path = `output/${msg.file.name}`;
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
        this.event(active, 'artifact.created', { metadata: { path, size: msg.file.size } });
        break;
      }
      case 'done':
        break;
    }
  }

  private async finish(active: ActiveRun, outcome: RunOutcome): Promise<void> {
    if (TERMINAL.has(active.record.status) || this.finishing.has(active)) return;
    if (active.abandoned) return this.dropAbandoned(active);
    // The output check may wait for a worker; a second end of the same run (a cancel racing the
    // completion) must not slip in meanwhile.
    this.finishing.add(active);
    // Shared queue: the execution has ended, so the run's pool thread is free for the next claim
    // while its end is written (database time, not the pool's).
    if (this.queue) void this.pump();
    const now = Date.now();
    const schemaValid =
      outcome.kind === 'completed'
        ? await this.outputValid(active.record.id, active.detail.manifest, outcome.output)
        : null;
    // A queue that writes the end itself (completeWith) checks the lease in that write: no
    // renewal first, and no stored record to read for the store's update.
    const fenced = this.queue?.completeWith !== undefined;
    // Read again below before the final write; a failure here (the database is down) is not one.
    const previousStored = fenced
      ? active.record
      : ((await this.store.get(active.record.id).catch(() => undefined)) ?? active.record);
    const status: RunStatus = outcome.kind;
    // Several nodes: output files go to the shared blob store before the end is recorded, so
    // any node answers artifact downloads, ZIPs, scoring and reviews of the run.
    const files = this.queue ? await this.shareOutputs(active) : active.record.files;
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
    const type =
      status === 'completed' ? 'run.completed' : status === 'cancelled' ? 'run.cancelled' : 'run.failed';
    const extra: Omit<RunEvent, 'seq' | 'type' | 'timestamp'> = { status };
    if (next.error) extra.message = next.error;
    if (next.errorCode) extra.metadata = { code: next.errorCode };
    if (this.queue && !fenced) {
      // Fencing: the outcome is recorded only while this node still holds the run's lease (a
      // renewal now confirms it; the lease then outlasts the two writes below by far). A node
      // that lost it stops here, and the node that took the run over records its outcome.
      let lost: string[];
      for (let attempt = 0; ; attempt++) {
        try {
          lost = await this.queue.renew();
          break;
        } catch (err) {
          // An outage is waited out; the queue gives the run up itself (lost) once its lease may
          // have run out.
          if (unavailable(err) && !this.closing && !active.abandoned) {
            await backoff(attempt);
            continue;
          }
          this.options.log.error({ err, runId: next.id }, 'cannot confirm the lease of a finished run');
          lost = [next.id];
          break;
        }
      }
      if (lost.includes(next.id) || active.abandoned) {
        active.abandoned = true;
        this.finishing.delete(active);
        return this.dropAbandoned(active);
      }
    }
    const end = nextEvent(active, type, extra);
    if (!fenced) track(active, this.store.appendEvent(next.id, end));
    for (let attempt = 0; ; attempt++) {
      try {
        if (attempt === 0) await Promise.all(active.writes);
        if (fenced) {
          const written = { record: next, detail: active.detail, events: [end] };
          if (!active.abandoned && (await this.queue.completeWith!(next.id, status, written))) break;
          // No longer this node's run (given up, or taken over: then nothing was written); the
          // node that holds it records its end.
          active.abandoned = true;
          this.finishing.delete(active);
          return this.dropAbandoned(active);
        }
        // Writes above may have committed an older copy; the final one is read back from what
        // is stored now so index entries move from the state that is really there.
        await this.store.update((await this.store.get(next.id)) ?? previousStored, next, active.detail);
        if (this.queue) await this.queue.complete(next.id, status);
        break;
      } catch (err) {
        // With the queue, an outage of the database is waited out (the lease is renewed again
        // once it is back) and the end recorded then; a node that lost the lease meanwhile
        // gives up, and the node that takes the run over runs it again.
        if (this.queue && unavailable(err) && !active.abandoned && !this.closing) {
          await backoff(attempt);
          continue;
        }
        this.options.log.error({ err, runId: next.id }, 'cannot store the end of a run');
        break;
      }
    }
    this.options.observer?.ended(next);
    this.active.delete(next.id);
    const waiting = this.waiters.get(next.id);
    if (waiting) {
      this.waiters.delete(next.id);
      for (const resolve of waiting) resolve(next);
    }
  }

  /**
   * The run's files with each output file stored in the blob store (by sha256). An outage of
   * the database is waited out as for the end's own writes; a file that cannot be read is left
   * without a blob (logged): it stays downloadable from this node only.
   */
  private async shareOutputs(active: ActiveRun): Promise<RunArtifact[]> {
    const out: RunArtifact[] = [];
    for (const f of active.record.files) {
      if (f.role !== 'output' || f.sha256) {
        out.push(f);
        continue;
      }
      const path = join(this.runDir(active.record.id), f.path);
      for (let attempt = 0; ; attempt++) {
        try {
          const { sha256 } = await this.options.blobs.write(createReadStream(path));
          out.push({ ...f, sha256 });
          break;
        } catch (err) {
          if (unavailable(err) && !this.closing && !active.abandoned) {
            await backoff(attempt);
            continue;
          }
          this.options.log.warn(
            { err, runId: active.record.id, path: f.path },
            'cannot share an output file',
          );
          out.push(f);
          break;
        }
      }
    }
    return out;
  }

  /**
   * Shared queue: the run is no longer this node's; its execution stops and nothing more is
   * recorded here. Callers waiting here for it go on waiting for its end on any node.
   */
  private abandon(active: ActiveRun, reason: string): void {
    if (active.abandoned) return;
    active.abandoned = true;
    this.options.log.warn({ runId: active.record.id }, reason);
    active.handle?.cancel(reason);
  }

  private dropAbandoned(active: ActiveRun): void {
    const id = active.record.id;
    if (this.active.get(id) === active) this.active.delete(id);
    // Its lease lapses and a claim takes it over (at shutdown close() releases it instead).
    if (this.queue && !this.closing) this.queue.forget(id);
    const waiting = this.waiters.get(id);
    if (waiting && this.queue) {
      this.waiters.delete(id);
      const last = active.record;
      void this.waitQueued(id, last).then((run) => {
        for (const resolve of waiting) resolve(run);
      });
    }
    if (this.queue && !this.closing) void this.pump();
  }

  /** Shared queue: the run's stored record once it is done on whichever node ran it. */
  private async waitQueued(id: string, current: RunRecord): Promise<RunRecord> {
    for (;;) {
      try {
        await this.queue!.waitForDone(id);
        return await this.storedFinal(id, current);
      } catch (err) {
        // The database is unreachable: the queue's listener reconnects and says so; until then
        // this waiter keeps the run's last known state.
        if (this.closing) return current;
        await new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
        void err;
      }
    }
  }

  /**
   * The stored record of a run the queue says is done. A cancelled queued run is marked done
   * just before its record is written (cancel below), so a waiter may read it a moment early:
   * it reads again, a bounded number of times.
   */
  private async storedFinal(id: string, fallback: RunRecord): Promise<RunRecord> {
    let run = (await this.store.get(id)) ?? fallback;
    for (let i = 0; i < 100 && !TERMINAL.has(run.status); i++) {
      await new Promise<void>((resolve) => setTimeout(resolve, 20));
      run = (await this.store.get(id)) ?? run;
    }
    return run;
  }

  /** Shared queue: claims runs while this node has room (on start, wake, and each run's end). */
  private async pump(): Promise<void> {
    if (!this.queue || this.closing) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        // A run whose end is being recorded no longer holds a pool thread: its slot is free.
        let executing = 0;
        for (const a of this.active.values()) if (!this.finishing.has(a)) executing++;
        const room = (this.options.capacity ?? 1) - executing;
        if (room <= 0) break;
        const claims = await this.queue.claim(room);
        await Promise.all(claims.map((c) => this.adopt(c)));
        // A full claim may have left more behind.
        if (claims.length === room) this.pumpAgain = true;
      } while (this.pumpAgain && !this.closing);
    } catch (err) {
      // The database is unreachable: the queue wakes this node again once its listener is back.
      this.options.log.warn({ err }, 'cannot claim runs from the queue');
    } finally {
      this.pumping = false;
    }
  }

  /** Shared queue: a claimed run becomes this node's live run and is executed here. */
  private async adopt(claim: QueueClaim): Promise<void> {
    const queue = this.queue!;
    const id = claim.runId;
    let record: RunRecord | undefined;
    let stored: RunDetail | undefined;
    try {
      [record, stored] = await Promise.all([this.store.get(id), this.store.getDetail(id)]);
      if (!record || !stored) {
        await queue.complete(id, 'failed');
        return;
      }
      if (TERMINAL.has(record.status)) {
        // Its end was stored but the node that ran it stopped before marking it done.
        await queue.complete(id, record.status);
        return;
      }
    } catch (err) {
      this.options.log.warn({ err, runId: id }, 'cannot read a claimed run; it goes back to the queue');
      if (!(await queue.release(id).catch(() => false))) queue.forget(id);
      return;
    }
    const events = await this.store.events(id).catch(() => [] as RunEvent[]);
    const detail: RunDetail = claim.takeover
      ? { ...stored, steps: [], trace: [], usage: emptyUsage() }
      : stored;
    const active: ActiveRun = {
      record,
      detail,
      seq: events.reduce((m, e) => Math.max(m, e.seq), 0),
      handle: undefined,
      cancelledBeforeSubmit: false,
      writes: [],
      lastEventMs: events.reduce((m, e) => Math.max(m, Date.parse(e.timestamp)), 0),
    };
    this.active.set(id, active);
    if (claim.takeover) {
      // Run again from the start: what the previous node recorded of its execution is replaced.
      const previous = record;
      active.record = {
        ...previous,
        status: 'pending',
        startedAt: null,
        output: null,
        files: previous.files.filter((f) => f.role === 'input'),
      };
      track(active, this.store.update(previous, active.record));
      this.options.observer?.takenOver(active.record);
      this.event(active, 'run.taken_over', {
        status: 'pending',
        message: `the lease of node ${claim.previousNode ?? 'unknown'} expired; run again on node ${queue.nodeId}`,
        metadata: { previousNode: claim.previousNode, node: queue.nodeId, attempt: claim.attempt },
      });
    }
    // Claiming goes on while the run executes.
    active.executed = this.execute(active, claim);
  }

  private async execute(active: ActiveRun, claim: QueueClaim): Promise<void> {
    const id = claim.runId;
    const { record, detail } = active;
    try {
      if (claim.cancelRequested || this.cancelAsked.delete(id)) {
        active.record = {
          ...active.record,
          cancelRequestedAt: active.record.cancelRequestedAt ?? Date.now(),
        };
        active.cancelledBeforeSubmit = true;
        await this.finish(active, {
          kind: 'cancelled',
          error: new RunFailure('cancelled', 'cancelled before it started'),
        });
        return;
      }
      const automation = await this.registry.get(record.automationId);
      if (!automation)
        throw new RunFailure('version_unavailable', `automation ${record.automationId} is unknown`);
      const manifest = await this.registry.manifestAt(record.git.commitSha, automation.type, automation.slug);
      // The node that received the run wrote its inputs here only if it is this node.
      const dir = this.runDir(id);
      await mkdir(join(dir, 'output'), { recursive: true });
      for (const f of detail.input.files)
        if (!(await localCopy(this.options.blobs, join(dir, f.path), f.sha256)))
          throw new RunFailure('input_unavailable', `input file ${f.name} is not in the blob store`);
      await this.dispatch(active, automation, manifest);
    } catch (err) {
      if (unavailable(err) && !this.closing) {
        // The database went away while the run was being prepared: not the run's failure. It
        // is given up here and run again after a takeover.
        this.abandon(active, 'the database is unavailable; the run will be taken over');
        return this.dropAbandoned(active);
      }
      await this.finish(active, {
        kind: 'failed',
        error:
          err instanceof RunFailure
            ? err
            : new RunFailure('version_unavailable', `cannot prepare the run: ${(err as Error).message}`),
      });
    }
  }

  async cancel(id: string): Promise<CancelResult> {
    const active = this.active.get(id);
    if (!active) {
      const run = await this.store.get(id);
      if (!run) throw notFound(`run ${JSON.stringify(id)}`, 'id');
      if (this.queue && !TERMINAL.has(run.status)) return this.cancelQueued(run);
      return { run, state: 'already_terminal', wasStatus: run.status };
    }
    const wasStatus = active.record.status;
    if (TERMINAL.has(wasStatus)) return { run: active.record, state: 'already_terminal', wasStatus };
    const queued = wasStatus === 'pending' || wasStatus === 'created';
    if (queued) {
      // Not started: it ends now. If the worker was just picking it up, the pool's abort
      // terminates that worker, so nothing of this run keeps going.
      active.cancelledBeforeSubmit = true;
      // The request time is part of the run's timing whether or not it had started.
      active.record = { ...active.record, cancelRequestedAt: Date.now() };
      active.handle?.cancel('cancelled while queued');
      const done = this.waitFor(id, 0);
      await this.finish(active, {
        kind: 'cancelled',
        error: new RunFailure('cancelled', 'cancelled before it started'),
      });
      return { run: await done, state: 'cancelled', wasStatus };
    }
    if (active.record.cancelRequestedAt === null) {
      const previous = active.record;
      active.record = { ...previous, cancelRequestedAt: Date.now() };
      track(active, this.store.update(previous, active.record));
      this.event(active, 'run.cancel_requested', { status: active.record.status });
      active.handle?.cancel('cancel requested');
    }
    return { run: active.record, state: 'requested', wasStatus };
  }

  /** Shared queue: a run this node does not execute, cancelled through the queue. */
  private async cancelQueued(run: RunRecord): Promise<CancelResult> {
    const wasStatus = run.status;
    const outcome = await this.queue!.cancel(run.id);
    if (outcome.state === 'finished') {
      const stored = await this.storedFinal(run.id, run);
      return { run: stored, state: 'already_terminal', wasStatus: stored.status };
    }
    if (outcome.state === 'unknown') throw notFound(`run ${JSON.stringify(run.id)}`, 'id');
    const now = Date.now();
    if (outcome.state === 'signalled')
      // The owning node stops it and records the end.
      return {
        run: { ...run, cancelRequestedAt: run.cancelRequestedAt ?? now },
        state: 'requested',
        wasStatus,
      };
    // Taken out of the queue before any node claimed it: it ends here.
    const next: RunRecord = {
      ...run,
      status: 'cancelled',
      cancelRequestedAt: run.cancelRequestedAt ?? now,
      completedAt: now,
      error: 'cancelled before it started',
      errorCode: 'cancelled',
    };
    const seq = (await this.store.lastEventSeq(run.id)) + 1;
    await this.store.appendEvent(run.id, {
      seq,
      type: 'run.cancelled',
      timestamp: new Date(now).toISOString(),
      status: 'cancelled',
      message: next.error!,
      metadata: { code: 'cancelled' },
    });
    await this.store.update(run, next);
    this.options.observer?.ended(next);
    return { run: next, state: 'cancelled', wasStatus };
  }

  /** Resolves with the run once terminal, or with its current state after `timeoutMs` (0 = no limit). */
  async waitFor(id: string, timeoutMs: number): Promise<RunRecord> {
    // A live run is read without awaiting, so its waiter is registered before it can finish; a
    // run that is not live has its final record stored.
    const current = this.active.get(id)?.record ?? (await this.store.get(id));
    if (!current) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    if (TERMINAL.has(current.status) && !this.active.has(id)) return current;
    if (this.queue && !this.active.has(id)) {
      // Whichever node runs it, its end is announced through the queue.
      const done = this.waitQueued(id, current);
      if (timeoutMs <= 0) return done;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<RunRecord>((resolve) => {
        timer = setTimeout(() => {
          this.get(id).then(
            (run) => resolve(run ?? current),
            () => resolve(current),
          );
        }, timeoutMs);
      });
      return Promise.race([done, late]).finally(() => clearTimeout(timer));
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (run: RunRecord) => {
        clearTimeout(timer);
        resolve(run);
      };
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(done);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          this.waiters.get(id)?.delete(done);
          this.get(id).then(
            (run) => resolve(run ?? current),
            () => resolve(current),
          );
        }, timeoutMs);
      }
    });
  }

  /** Starts a new run from a stored run's input; `original` pins the stored run's commit. */
  async rerun(
    id: string,
    version: string | undefined,
    principal: Pick<Principal, 'tenant' | 'user'>,
  ): Promise<RunRecord> {
    const source = await this.get(id);
    const detail = await this.getDetail(id);
    if (!source || !detail) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    const files: StagedInputFile[] = detail.input.files.map((f) => ({
      field: f.field,
      filename: f.filename,
      contentType: f.contentType,
      size: f.size,
      sha256: f.sha256,
      // Another node's run: its inputs are in the shared blob store (put there at its start).
      source: existsSync(join(this.runDir(source.id), f.path))
        ? { path: join(this.runDir(source.id), f.path) }
        : 'blob',
      fileId: f.fileId,
    }));
    const req: StartRunRequest = {
      target: source.automationId,
      input: detail.input.args,
      files,
      overrides: detail.overrides,
      metadata: detail.input.metadata,
      principal,
      trigger: source.trigger.type === 'experiment' ? 'api' : source.trigger.type,
      previousRun: source,
    };
    if (version === 'original')
      req.pinnedGit = {
        ...source.git,
        requestedRef: 'original',
        version: source.version,
        versionId: source.versionId,
      };
    else if (version !== undefined) req.version = version;
    return this.start(req);
  }

  /** At start: runs left queued are dispatched again; runs cut off mid-flight are failed. */
  async recover(): Promise<{ requeued: number; failed: number }> {
    if (this.queue) {
      // Other nodes' runs are not this process's to recover: runs a dead node held come back
      // through their expired leases, queued runs are claimed as usual.
      void this.pump();
      return { requeued: 0, failed: 0 };
    }
    let requeued = 0;
    let failed = 0;
    for (const run of await this.store.unfinished()) {
      const detail = await this.store.getDetail(run.id);
      const active: ActiveRun = {
        record: run,
        detail: detail ?? emptyDetail(),
        seq: await this.store.lastEventSeq(run.id),
        handle: undefined,
        cancelledBeforeSubmit: false,
        writes: [],
        lastEventMs: (await this.store.events(run.id)).reduce(
          (m, e) => Math.max(m, Date.parse(e.timestamp)),
          0,
        ),
      };
      this.active.set(run.id, active);
      const automation = await this.registry.get(run.automationId);
      if ((run.status === 'pending' || run.status === 'created') && detail && automation) {
        try {
          const manifest = await this.registry.manifestAt(
            run.git.commitSha,
            automation.type,
            automation.slug,
          );
          void this.dispatch(active, automation, manifest);
          requeued++;
          continue;
        } catch {
          // falls through to failed
        }
      }
      await this.finish(active, {
        kind: 'failed',
        error: new RunFailure('service_interrupted', 'the service stopped while the run was in flight'),
      });
      failed++;
    }
    return { requeued, failed };
  }

  /** Stops taking runs; in-flight runs are cancelled so each reaches a terminal state. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.queue) {
      // Another node runs them again: each is stopped here and put back in the queue.
      const mine = [...this.active.values()];
      for (const a of mine) this.abandon(a, 'the node shuts down; the run goes back to the queue');
      await Promise.all(mine.map((a) => a.executed ?? Promise.resolve()));
      await Promise.all(mine.map((a) => this.queue!.release(a.record.id).catch(() => false)));
      return;
    }
    const pending = [...this.active.keys()].map(async (id) => {
      const a = this.active.get(id);
      if (!a) return;
      a.handle?.cancel('service shutting down');
      if (!a.handle)
        await this.finish(a, {
          kind: 'cancelled',
          error: new RunFailure('cancelled', 'service shutting down'),
        });
    });
    await Promise.all(pending);
    await Promise.all([...this.active.keys()].map((id) => this.waitFor(id, 10_000)));
  }
}

/** A failed write of a new run: the database's 503 as it is, anything else a 500. */
function persistenceError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(500, 'persistence_error', `the run could not be stored: ${(err as Error).message}`);
}

/** The database could not be reached (the PostgreSQL adapter's 503 `database_unavailable`). */
function unavailable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'database_unavailable';
}

/**
 * A write of a live run, awaited together with the others when the run ends; marked handled now,
 * so one that fails meanwhile (the database is down) is not an unhandled rejection.
 */
function track(active: ActiveRun, write: Promise<unknown>): void {
  write.catch(() => undefined);
  active.writes.push(write);
}

/** The run's next event (its seq, its time never before the last one's), not yet written. */
function nextEvent(
  active: ActiveRun,
  type: string,
  extra: Omit<RunEvent, 'seq' | 'type' | 'timestamp'> = {},
  at?: string,
): RunEvent {
  // Worker and main-thread times interleave; the timeline never goes backwards.
  const ms = Math.max(at !== undefined ? Date.parse(at) : Date.now(), active.lastEventMs);
  active.lastEventMs = ms;
  return { seq: ++active.seq, type, timestamp: new Date(ms).toISOString(), ...extra };
}

/** 100 ms doubling up to 2 s: the pause before trying the database again. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
}
