// Starting runs: `run`, `rerun` and `run_and_wait`.
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientError, ClientTimeoutError } from '../errors.js';
import { extractFiles, pointTo } from '../files.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import { TERMINAL_STATUSES } from '../types.js';
import type { FinishedRun, Run, RunStartResponse } from '../types.js';
import { filesToUploadFirst } from '../upload-limits.js';
import type { FilesGroup } from './files.js';

/** What to run: `workflows.<slug>`, `agents.<slug>` or an id, optionally `@<version>`. */
export type RunTarget = string | { type: 'workflow' | 'agent'; slug?: string; id?: string; version?: string };

export interface RunOptions extends CallOptions {
  /** Release or git ref (default latest). A `@version` suffix on the target means the same. */
  version?: string;
  /** Seconds the server may hold the request until the run ends (max 600); omit for async. */
  wait_for_completion?: number;
  waitForCompletion?: number;
  /** `{ steps: { <name>: <output> } }` replaces step outputs. */
  overrides?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface RerunOptions extends CallOptions {
  /** `original` pins the source run's version; default latest. */
  version?: string;
  wait_for_completion?: number;
  waitForCompletion?: number;
}

export interface RunAndWaitOptions extends Omit<RunOptions, 'wait_for_completion' | 'waitForCompletion'> {
  /** Overall budget for start plus polling, in seconds; default 300. */
  max_wait_seconds?: number;
  maxWaitSeconds?: number;
  /** First pause between polls, in seconds; grows by half each poll up to 5 s. Default 1. */
  poll_interval_seconds?: number;
  pollIntervalSeconds?: number;
}

const MAX_SERVER_WAIT_SECONDS = 600;
const MAX_POLL_INTERVAL_MS = 5000;

function resolveTarget(
  target: RunTarget,
  version: string | undefined,
): { target: string; version: string | undefined } {
  if (typeof target === 'string') {
    const at = target.indexOf('@');
    if (at === 0 || at === target.length - 1 || target.length === 0) {
      throw new ClientError(
        `run target must be <target> or <target>@<version>, got ${JSON.stringify(target)}`,
        'invalid_argument',
      );
    }
    if (at < 0) return { target, version };
    return { target: target.slice(0, at), version: version ?? target.slice(at + 1) };
  }
  const name = target.slug ?? target.id;
  if (!name) throw new ClientError('run target object needs a slug or an id', 'invalid_argument');
  const full =
    target.slug !== undefined ? `${target.type === 'agent' ? 'agents' : 'workflows'}.${target.slug}` : name;
  return { target: full, version: version ?? target.version };
}

/** `finished: true` is the server's word; a terminal execution status is accepted as well. */
export function isFinished(run: RunStartResponse | undefined): run is Run {
  if (!run) return false;
  if (run.finished === true) return true;
  const status = 'execution' in run ? run.execution.status : undefined;
  return typeof status === 'string' && TERMINAL_STATUSES.includes(status);
}

/** The caller's signal, time-out and headers, without the run's own idempotency key. */
function uploadCall(options: CallOptions): CallOptions {
  const { idempotencyKey: _key, ...rest } = options;
  return rest;
}

export class RunStarter {
  constructor(
    private readonly transport: Transport,
    private readonly files: FilesGroup,
  ) {}

  /**
   * POST /runs. File values anywhere in `input` go as multipart parts (see files.ts); otherwise
   * the body is JSON `{ target, input, overrides?, metadata? }`. Files that would take the
   * multipart body past `multipart_max_bytes` are uploaded first (purpose `run-input`) and
   * referenced as `{ "$fileId": ... }`, as the product SDK does.
   */
  async start(
    target: RunTarget,
    input: Record<string, unknown> = {},
    options: RunOptions = {},
  ): Promise<RunStartResponse> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new ClientError('run input must be an object', 'invalid_argument');
    }
    const resolved = resolveTarget(target, options.version);
    const query = {
      version: resolved.version,
      wait_for_completion: options.wait_for_completion ?? options.waitForCompletion,
    };
    const { json, parts: found } = extractFiles(input);
    const first = filesToUploadFirst(
      found.map((part) => ({ key: part.field, size: part.blob.size })),
      this.transport.options.multipartMaxBytes,
    );
    for (const part of found) {
      if (!first.has(part.field)) continue;
      const stored = await this.files.upload(
        part.blob,
        { filename: part.filename, purpose: 'run-input' },
        uploadCall(options),
      );
      pointTo(part, stored.id);
    }
    const parts = found.filter((part) => !first.has(part.field));
    if (found.length === 0) {
      const body: Record<string, unknown> = { target: resolved.target, input };
      if (options.overrides !== undefined) body['overrides'] = options.overrides;
      if (options.metadata !== undefined) body['metadata'] = options.metadata;
      return this.transport.json({ method: 'POST', path: '/runs', query, json: body, call: options });
    }
    if (parts.length === 0) {
      const body: Record<string, unknown> = { target: resolved.target, input: json };
      if (options.overrides !== undefined) body['overrides'] = options.overrides;
      if (options.metadata !== undefined) body['metadata'] = options.metadata;
      return this.transport.json({ method: 'POST', path: '/runs', query, json: body, call: options });
    }
    const form = new FormData();
    form.append('target', resolved.target);
    form.append('input', JSON.stringify(json));
    if (options.overrides !== undefined) form.append('overrides', JSON.stringify(options.overrides));
    if (options.metadata !== undefined) form.append('metadata', JSON.stringify(options.metadata));
    for (const part of parts) form.append(part.field, part.blob, part.filename);
    return this.transport.json({ method: 'POST', path: '/runs', query, form, call: options });
  }

  /** POST /runs/{id}/rerun: a new run from the stored input of `runId`. */
  async rerun(runId: string, options: RerunOptions = {}): Promise<RunStartResponse> {
    const query = {
      version: options.version,
      wait_for_completion: options.wait_for_completion ?? options.waitForCompletion,
    };
    return this.transport.json({
      method: 'POST',
      path: `/runs/${segment(runId)}/rerun`,
      query,
      call: options,
    });
  }

  /**
   * Starts a run and resolves with it once it is terminal (completed, failed, cancelled or
   * rejected) — a failed run is returned, not thrown; check `execution.status` and `error`. The
   * server is first asked to hold the request (`wait_for_completion`, bounded by the per-request
   * time-out); after that the run is polled. Past `max_wait_seconds` a ClientTimeoutError
   * carrying `runId` is thrown; the run itself keeps going.
   */
  async runAndWait(
    target: RunTarget,
    input: Record<string, unknown> = {},
    options: RunAndWaitOptions = {},
  ): Promise<FinishedRun> {
    const maxWaitMs = (options.max_wait_seconds ?? options.maxWaitSeconds ?? 300) * 1000;
    let intervalMs = (options.poll_interval_seconds ?? options.pollIntervalSeconds ?? 1) * 1000;
    if (!(maxWaitMs > 0) || !(intervalMs > 0)) {
      throw new ClientError(
        'max_wait_seconds and poll_interval_seconds must be positive',
        'configuration_error',
      );
    }
    const startedAt = Date.now();
    const requestTimeoutMs =
      options.timeoutSeconds !== undefined ? options.timeoutSeconds * 1000 : this.transport.options.timeoutMs;
    // Leave a second of the request's own time-out for the answer to travel back.
    const serverWait = Math.min(
      MAX_SERVER_WAIT_SECONDS,
      Math.floor(maxWaitMs / 1000),
      Math.floor(requestTimeoutMs / 1000) - 1,
    );
    const {
      max_wait_seconds: _a,
      maxWaitSeconds: _b,
      poll_interval_seconds: _c,
      pollIntervalSeconds: _d,
      ...runOptions
    } = options;
    const started = await this.start(
      target,
      input,
      serverWait >= 1 ? { ...runOptions, wait_for_completion: serverWait } : runOptions,
    );
    if (typeof started?.id !== 'string')
      throw new ClientError('run start answer has no id', 'invalid_response');
    let run: RunStartResponse = started;
    const call: CallOptions = {};
    if (options.signal !== undefined) call.signal = options.signal;
    if (options.timeoutSeconds !== undefined) call.timeoutSeconds = options.timeoutSeconds;
    while (!isFinished(run)) {
      const remaining = maxWaitMs - (Date.now() - startedAt);
      if (remaining <= 0) {
        throw new ClientTimeoutError(`run ${started.id} did not finish within ${maxWaitMs / 1000} s`, {
          runId: started.id,
        });
      }
      const signal = options.signal;
      await sleep(Math.min(intervalMs, remaining), undefined, signal ? { signal } : undefined).catch(() => {
        throw signal?.reason;
      });
      intervalMs = Math.min(MAX_POLL_INTERVAL_MS, intervalMs * 1.5);
      run = await this.transport.json<Run>({ method: 'GET', path: `/runs/${segment(started.id)}`, call });
    }
    // A sync start may answer with a summary; the terminal Run carries `output`.
    let done: Run = run;
    if (!('output' in done))
      done = await this.transport.json<Run>({ method: 'GET', path: `/runs/${segment(started.id)}`, call });
    const finished: FinishedRun = { ...done, finished: true, output: done.output };
    return finished;
  }
}
