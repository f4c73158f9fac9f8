// Admission of a run: the request checked (target, version, trigger, input schema, input file
// paths, the queued-runs bound), the version pinned to a commit, the input files staged into the
// run's folder, and the run stored and queued in one step (RunQueue.createQueued). Whichever
// node claims it then executes it (execution.ts).

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Principal } from '../../core/auth/types.js';
import { invalid, notFound, ApiError } from '../errors.js';
import { checkRelativePath } from '../datasets/paths.js';
import { snapshot } from '../files/blobs.js';
import { parseTarget, type AutomationRecord } from '../registry/service.js';
import type { Manifest } from '../registry/manifest.js';
import { checkSchema } from '../evals/index.js';
import type { TraceSpan } from '../../core/tracing/index.js';
import { shown, type Engine } from './engine.js';
import type { Execution } from './execution.js';
import { QueueFullError, type QueueClaim } from './queue.js';
import { inputPath } from './folder.js';
import { newRunId, sampleRank } from './ids.js';
import {
  emptyUsage,
  type RunDetail,
  type RunEvent,
  type RunGit,
  type RunInputFile,
  type RunRecord,
} from './types.js';

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
  /**
   * Only the run's end is acknowledged to the caller (a synchronous start): its creation need
   * not be committed before it runs (RunQueue CreateOptions). A caller that answers before the
   * end after all awaits `RunService.committed` first.
   */
  endAcknowledged?: boolean;
  /** The caller's W3C traceparent header: the run's trace continues it (when tracing is on). */
  traceparent?: string | undefined;
  /**
   * Internal: stores and queues the run in the caller's step instead of the queue's own (a
   * schedule's tick claim, triggers/cron/scheduler.ts: the run and the claim commit together).
   */
  createQueued?: (run: RunRecord, detail: RunDetail, events: RunEvent[]) => Promise<void>;
}

export class Admission {
  execution!: Execution;

  constructor(private readonly e: Engine) {}

  /** Admits a run inside its start span (tracing.ts), whose context the run record carries. */
  async start(req: StartRunRequest): Promise<RunRecord> {
    const span = this.e.tracing.startRequest(req.traceparent, req.target);
    try {
      return await this.admit(req, span);
    } catch (err) {
      span?.fail(err);
      throw err;
    } finally {
      span?.end(undefined);
    }
  }

  private async admit(req: StartRunRequest, span: TraceSpan | undefined): Promise<RunRecord> {
    if (this.e.closing) throw new ApiError(503, 'shutting_down', 'the service is shutting down');
    const target = parseTarget(req.target);
    const targetVersion = target.version;
    if (targetVersion !== undefined && req.version !== undefined && targetVersion !== req.version) {
      throw invalid(
        'version',
        `target names version ${targetVersion} but the version parameter says ${req.version}`,
      );
    }
    const automation = await this.e.registry.resolveTarget(target);
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
      const resolved = await this.e.registry.resolveVersion(
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
      // The synced release's version record is the automation's own (saved with it, registry
      // service `sync`): no scan of its versions for it.
      versionId = !resolved.resolvedTag
        ? null
        : resolved.resolvedTag === automation.tag && automation.versionId
          ? automation.versionId
          : ((await this.e.registry.versions(automation.id)).find((v) => v.sourceRef === resolved.resolvedTag)
              ?.id ?? null);
    }
    const manifest = await this.e.registry.manifestAt(git.commitSha, automation.type, automation.slug);
    // Another node may run it: the pinned commit must be in the shared database first.
    await this.e.options.sharing.publishCommit(git.commitSha);
    const trigger = req.trigger ?? 'api';
    // The CLI calls the same API: the api trigger governs both.
    if ((trigger === 'api' || trigger === 'cli') && !manifest.triggers.api) {
      throw new ApiError(403, 'api_trigger_disabled', `the api trigger of ${automation.slug} is disabled`, [
        { field: 'target', message: 'api trigger disabled in the manifest', code: 'api_trigger_disabled' },
      ]);
    }
    const args = req.input ?? {};
    await this.validateInput(automation, manifest, args);
    // The queued-runs bound (with a shared queue, the cluster's: runs waiting for any node) is
    // checked by the queue in the step that stores the run (CreateOptions.maxQueued), so a start
    // costs no count of its own. A caller that stores the run in its own step (a schedule's tick)
    // counts first. A run this node can take at once is not counted: it will not wait in the queue.
    const { maxQueuedRuns } = this.e.options;
    if (req.createQueued && !this.execution.canTake()) {
      const queued = await this.e.queue.queuedCount(maxQueuedRuns);
      if (queued >= maxQueuedRuns) throw queueFull(queued);
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
    for (const f of req.files ?? [])
      if (f.source !== 'blob') await this.e.options.sharing.putInput(f.source.path);
    const now = Date.now();
    const id = newRunId(now);
    const dir = this.e.runDir(id);
    // No folder for a run without input files: its worker makes output/ when it writes a file.
    const inputFiles: RunInputFile[] = [];
    for (const f of req.files ?? []) {
      const rel = inputPath(f.field, f.filename);
      const target = join(dir, rel);
      if (f.source === 'blob') await this.e.options.blobs.copyTo(f.sha256, target);
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
    if (span) record.traceparent = span.traceparent;
    this.e.tracing.admitted(span, record);
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
    this.e.admitted.set(id, { record, detail, seq: 2, at: now, automation, manifest });
    // With room here and no queued run heard of before it, the run is stored claimed by this node
    // (one statement on the shared queue instead of a creation, a wake and a claim).
    const direct = !req.createQueued && this.execution.reserve();
    let claim: QueueClaim | undefined;
    try {
      // One step: the run is never stored without being queued (or claimed).
      if (req.createQueued) await req.createQueued(record, detail, events);
      else {
        // Held back for the end only when the run starts at once: one that waits in the queue
        // would be written on its own anyway (LmdbRunStore.createDeferred).
        const options = {
          ...(req.endAcknowledged && direct ? { endAcknowledged: true } : {}),
          ...(req.endAcknowledged ? { answeredAtEnd: true } : {}),
          ...(direct ? {} : { maxQueued: maxQueuedRuns }),
        };
        if (direct) claim = await this.e.queue.createClaimed(record, detail, events, options);
        else await this.e.queue.createQueued(record, detail, events, options);
      }
    } catch (err) {
      this.e.admitted.delete(id);
      if (direct) await this.execution.settle(undefined);
      // Not stored: its staged input files go (a run without them has no folder).
      if (inputFiles.length > 0) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      if (err instanceof QueueFullError) throw queueFull(err.queued);
      throw persistenceError(err);
    }
    if (direct) await this.execution.settle(claim);
    this.e.admitted.delete(id);
    await this.linkRetry(previous, id);
    // Live here: as it is now; else as stored a moment ago (not read back).
    const live = this.e.active.get(id);
    return live ? shown(live) : record;
  }

  private async linkRetry(previous: RunRecord | undefined, id: string): Promise<void> {
    if (!previous) return;
    const prevNow = (await this.e.get(previous.id)) ?? previous;
    const updated = { ...prevNow, retry: { ...prevNow.retry, nextRunId: id } };
    const live = this.e.active.get(previous.id);
    if (live) live.record = updated;
    else await this.e.store.update(prevNow, updated);
  }

  private async validateInput(
    automation: AutomationRecord,
    manifest: Manifest,
    args: unknown,
  ): Promise<void> {
    if (!manifest.inputSchema) return;
    const outcome = await checkSchema(manifest.inputSchema, args, this.e.options.schemaPool);
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

  /** Starts a new run from a stored run's input; `original` pins the stored run's commit. */
  async rerun(
    id: string,
    version: string | undefined,
    principal: Pick<Principal, 'tenant' | 'user'>,
  ): Promise<RunRecord> {
    const source = await this.e.get(id);
    const detail = await this.e.getDetail(id);
    if (!source || !detail) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    const files: StagedInputFile[] = detail.input.files.map((f) => ({
      field: f.field,
      filename: f.filename,
      contentType: f.contentType,
      size: f.size,
      sha256: f.sha256,
      // Another node's run: its inputs are in the shared blob store (put there at its start).
      source: existsSync(join(this.e.runDir(source.id), f.path))
        ? { path: join(this.e.runDir(source.id), f.path) }
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
}

/** The queued-runs bound reached: 429, to be tried again shortly. */
function queueFull(queued: number): ApiError {
  return new ApiError(429, 'too_many_queued_runs', `${queued} runs are queued; try again shortly`, [], {
    'retry-after': '1',
  });
}

/** A failed write of a new run: the database's 503 as it is, anything else a 500. */
function persistenceError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(500, 'persistence_error', `the run could not be stored: ${(err as Error).message}`);
}
