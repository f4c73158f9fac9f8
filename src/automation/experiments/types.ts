// Experiment (batch) records as stored.

import type { AutomationType } from '../registry/manifest.js';

export type ExperimentStatus = 'queued' | 'running' | 'completed';

export interface ExperimentRunRef {
  id: string;
  exampleId: string;
  exampleName: string;
  createdAt: number;
}

export interface ExperimentRunResult {
  status: string;
  score: number | null;
  passed: boolean;
  completedAt: number;
}

export interface ExperimentRecord {
  id: string;
  tenant: string;
  automationId: string;
  automationType: AutomationType;
  status: ExperimentStatus;
  /** The ref runs were started at (null = latest release). */
  version: string | null;
  concurrency: number;
  createdAt: number;
  completedAt: number | null;
  cancelRequestedAt: number | null;
  /** Set when the process stopped while the experiment was running. */
  interrupted: boolean;
  /** Examples in the order they are run. */
  examples: { exampleId: string; exampleName: string }[];
  /** Runs started so far, in start order. */
  runs: ExperimentRunRef[];
  results: Record<string, ExperimentRunResult>;
}

export interface ExperimentEvent {
  type: 'run.completed';
  experimentId: string;
  runId: string;
  exampleId: string;
  exampleName: string;
  status: string;
  score: number | null;
  passed: boolean;
  completedCount: number;
  total: number;
}
