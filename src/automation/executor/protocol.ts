// Messages between the run service (main thread) and a pool worker thread. Each thread has one
// channel for its life (its worker port); runs are posted on it and everything a run reports
// comes back on it, tagged with the run's id, in the order the worker sent it. The final `done`
// message is a run's last.

export type RunKind = 'workflow' | 'agent';

export interface InputFileRef {
  /** Name under input/ as the automation sees it (`<field>/<filename>` or `<filename>`). */
  readonly name: string;
  readonly field: string;
  readonly path: string;
  readonly contentType: string;
  readonly size: number;
}

export interface ProviderSettings {
  readonly openaiBaseUrl?: string;
  readonly openaiApiKey?: string;
  readonly openaiModel?: string;
}

export interface RunTask {
  readonly runId: string;
  readonly kind: RunKind;
  /** Directory of the materialised package at the pinned commit. */
  readonly packageDir: string;
  readonly entry: string;
  readonly manifest: Record<string, unknown>;
  readonly input: unknown;
  readonly metadata: Record<string, unknown>;
  readonly files: readonly InputFileRef[];
  readonly overrides: { readonly steps?: Record<string, unknown> };
  readonly outputDir: string;
  readonly providers: ProviderSettings;
  /** Free space output writes leave on the output folder's disk (SLUICE_DISK_RESERVE; set by the pool). */
  readonly diskReserveBytes: number;
}

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface UsageDelta {
  tokens?: Partial<TokenUsage>;
  credits?: number;
  llmCalls?: number;
  agentTurns?: number;
  ocrPages?: number;
}

export interface StepReport {
  name: string;
  index: number;
  status: 'completed' | 'failed' | 'overridden' | 'cancelled';
  startedAt: string;
  completedAt: string;
  durationMs: number;
  output?: unknown;
  error?: string;
}

export interface OutputFileReport {
  name: string;
  size: number;
  contentType: string;
  stepName?: string;
}

export type WorkerMessage =
  | { t: 'started'; at: string }
  | { t: 'event'; type: string; at: string; message?: string; metadata?: Record<string, unknown> }
  | { t: 'step'; step: StepReport }
  | { t: 'trace'; entry: Record<string, unknown> }
  | { t: 'usage'; delta: UsageDelta }
  | { t: 'file'; file: OutputFileReport }
  | { t: 'done'; ok: true; output: unknown; at: string }
  | { t: 'done'; ok: false; error: string; cancelled: boolean; at: string };

/** Main thread to worker: a run to execute, or a cooperative cancel of the run it executes. */
export type PoolMessage = { t: 'run'; task: RunTask } | { t: 'cancel'; runId: string; reason: string };

/** Worker to main thread: what a run reports. */
export interface RunReport {
  readonly runId: string;
  readonly msg: WorkerMessage;
}
