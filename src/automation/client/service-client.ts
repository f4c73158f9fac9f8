// The client object: options resolved once, one transport, and the groups of the product SDK's
// surface (docs/client.md lists them).
import { AuthGroup } from './groups/auth.js';
import { AutomationsGroup } from './groups/automations.js';
import { ExperimentsGroup } from './groups/experiments.js';
import { FilesGroup } from './groups/files.js';
import { RunStarter } from './groups/run.js';
import type { RerunOptions, RunAndWaitOptions, RunOptions, RunTarget } from './groups/run.js';
import { RunsGroup } from './groups/runs.js';
import { resolveClientOptions } from './options.js';
import type { ServiceClientOptions } from './options.js';
import { Transport } from './transport.js';
import type { FinishedRun, RunStartResponse } from './types.js';

/**
 * Client of the automation API v1.
 *
 * ```ts
 * const client = new ServiceClient({ base_url: 'http://localhost:8083' }); // key from SERVICE_API_KEY
 * const run = await client.run_and_wait('workflows.text-report', { text: 'hi' });
 * console.log(run.finished, run.output);
 * ```
 */
export class ServiceClient {
  readonly automations: AutomationsGroup;
  readonly runs: RunsGroup;
  readonly files: FilesGroup;
  readonly auth: AuthGroup;
  readonly experiments: ExperimentsGroup;
  /** Resolved API root (`<base_url>/api/v1`). */
  readonly apiRoot: string;
  private readonly starter: RunStarter;

  constructor(options: ServiceClientOptions = {}) {
    const resolved = resolveClientOptions(options);
    const transport = new Transport(resolved);
    this.apiRoot = resolved.apiRoot;
    this.files = new FilesGroup(transport);
    this.starter = new RunStarter(transport, this.files);
    this.experiments = new ExperimentsGroup(transport);
    this.automations = new AutomationsGroup(transport, this.experiments);
    this.runs = new RunsGroup(transport);
    this.auth = new AuthGroup(transport);
  }

  /** POST /runs: starts a run (asynchronous unless `wait_for_completion` is given). */
  run(target: RunTarget, input?: Record<string, unknown>, options?: RunOptions): Promise<RunStartResponse> {
    return this.starter.start(target, input, options);
  }

  /** POST /runs/{id}/rerun: runs the stored input of a previous run again. */
  rerun(runId: string, options?: RerunOptions): Promise<RunStartResponse> {
    return this.starter.rerun(runId, options);
  }

  /** Starts a run and resolves with it once it is terminal (`finished: true`, `output`). */
  run_and_wait(
    target: RunTarget,
    input?: Record<string, unknown>,
    options?: RunAndWaitOptions,
  ): Promise<FinishedRun> {
    return this.starter.runAndWait(target, input, options);
  }

  /** camelCase alias of {@link ServiceClient.run_and_wait}. */
  runAndWait(
    target: RunTarget,
    input?: Record<string, unknown>,
    options?: RunAndWaitOptions,
  ): Promise<FinishedRun> {
    return this.starter.runAndWait(target, input, options);
  }
}
