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
  /**
   * The file's bytes when the worker kept it off the disk (a small file, see KEPT_FILE_BYTES):
   * the run's end stores them with its record. Absent: the file is in the run's output folder.
   */
  content?: Uint8Array;
}

/**
 * Output files of at most this many bytes are not written to the run's folder by the worker:
 * their bytes go to the main thread with the file's report and are stored with the run's end, in
 * its commit (docs/automation.md, "Output files"). A run's folder then needs no directory and no
 * file of its own, the costliest system calls of a short run, and the file is as durable as the
 * end that lists it. Larger files, and a run's files past KEPT_RUN_BYTES in all, go to the disk.
 */
export const KEPT_FILE_BYTES = 64 * 1024;
/** At most this many bytes of one run's output files are kept off the disk (KEPT_FILE_BYTES). */
export const KEPT_RUN_BYTES = 1024 * 1024;

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
