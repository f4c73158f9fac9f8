// Every store the automation service keeps its state in, built in one place so the service is
// wired the same whichever implementation answers (docs/architecture.md, "Automation stores").

import { join } from 'node:path';
import type { DiskReserve } from '../core/disk/reserve.js';
import { openAutomationDb } from './db.js';
import { LmdbExampleStore, type ExampleStore } from './datasets/store.js';
import { LmdbEvaluatorConfigStore, type EvaluatorConfigStore } from './evaluators/store.js';
import { LmdbExperimentStore, type ExperimentStore } from './experiments/store.js';
import type { BlobStore } from './files/blob-store.js';
import { LocalBlobStore } from './files/blobs.js';
import { LmdbFileStore, type FileStore } from './files/store.js';
import { LmdbAutomationStore, type AutomationStore } from './registry/store.js';
import { LmdbRegistrySourceStore, type RegistrySourceStore } from './registry/source-store.js';
import { LmdbReviewStore, type ReviewStore } from './reviews/store.js';
import { LmdbScoreStore, type ScoreStore } from './runs/scores.js';
import { LmdbRunStore, type RunStore } from './runs/store.js';
import { LmdbEmailMessageStore, type EmailMessageStore } from './triggers/email/message-store.js';
import type { ScheduleStore } from './triggers/cron/schedule.js';
import { LmdbScheduleStore } from './triggers/cron/store.js';
import { LmdbRetentionStore } from './retention/lmdb-store.js';
import type { RetentionStore } from './retention/store.js';

export interface AutomationStores {
  automations: AutomationStore;
  /** Git bundles of registry commits, for nodes that share a database (registry/sources.ts). */
  registrySources: RegistrySourceStore;
  runs: RunStore;
  scores: ScoreStore;
  files: FileStore;
  examples: ExampleStore;
  experiments: ExperimentStore;
  evaluatorConfigs: EvaluatorConfigStore;
  reviews: ReviewStore;
  /** Inbound messages that started (or were refused) a run, by automation and Message-ID. */
  emailMessages: EmailMessageStore;
  /** Registered schedules (cron triggers). */
  schedules: ScheduleStore;
  blobs: BlobStore;
  /** What the retention pass reads across tenants, and its lock (retention/store.ts). */
  retention: RetentionStore;
  close(): Promise<void>;
}

/** The embedded default's stores: its run store is the in-process run queue's (local-queue.ts). */
export interface LmdbStores extends AutomationStores {
  runs: LmdbRunStore;
}

/**
 * The embedded default: one LMDB environment (`meta.lmdb`) and blobs on disk, under `dataDir`.
 * `reserve` guards the blob writes (the LMDB writes are guarded per request, in index.ts).
 */
export function openLmdbStores(
  dataDir: string,
  options: { listScanLimit: number; reserve: DiskReserve },
): LmdbStores {
  const db = openAutomationDb(join(dataDir, 'meta.lmdb'));
  const blobs = new LocalBlobStore(join(dataDir, 'blobs'), options.reserve);
  const runs = new LmdbRunStore(db, { listScanLimit: options.listScanLimit });
  return {
    automations: new LmdbAutomationStore(db),
    registrySources: new LmdbRegistrySourceStore(db, blobs),
    runs,
    scores: new LmdbScoreStore(db),
    files: new LmdbFileStore(db, blobs),
    examples: new LmdbExampleStore(db, blobs),
    experiments: new LmdbExperimentStore(db),
    evaluatorConfigs: new LmdbEvaluatorConfigStore(db),
    reviews: new LmdbReviewStore(db),
    emailMessages: new LmdbEmailMessageStore(db),
    schedules: new LmdbScheduleStore(db, runs),
    blobs,
    retention: new LmdbRetentionStore(db, blobs),
    close: async () => {
      // Runs held back for their end (LmdbRunStore.createDeferred) are written before it closes.
      await runs.flushAll().catch(() => undefined);
      await db.close();
    },
  };
}
