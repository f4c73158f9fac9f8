// Every automation store on one PostgreSQL database: the same shape as openLmdbStores
// (src/automation/stores.ts), so the service is wired the same whichever answers.

import type { AutomationStores } from '../../stores.js';
import { PgBlobStore } from '../blob-store.js';
import type { PgDatabase } from '../pool.js';
import type { RegistryCache } from '../registry-cache.js';
import { PgScheduleStore } from '../../triggers/cron/pg-store.js';
import { PgAutomationStore } from './automations.js';
import { PgEmailMessageStore } from './email-messages.js';
import { PgExampleStore } from './examples.js';
import { PgEvaluatorConfigStore, PgExperimentStore } from './experiments.js';
import { PgFileStore } from './files.js';
import { PgRegistrySourceStore } from './registry-sources.js';
import { PgReviewStore } from './reviews.js';
import { PgRunStore } from './runs.js';
import { PgScoreStore } from './scores.js';
import { PgRetentionStore } from '../../retention/pg-store.js';

export { PgAutomationStore, PgExampleStore, PgEvaluatorConfigStore, PgExperimentStore };
export { PgFileStore, PgRegistrySourceStore, PgReviewStore, PgRunStore, PgScoreStore };

/**
 * The stores on `db`, whose schema is migrated (migrations.ts). `close` ends `db`'s pool, as
 * the LMDB stores' close closes their environment: close the run queue, which shares the pool,
 * first.
 */
export function openPgStores(
  db: PgDatabase,
  options: {
    listScanLimit?: number;
    blobChunkBytes?: number;
    registryCache?: RegistryCache;
    /** The run queue's answer to whether this node runs a run (run-writes.ts). */
    runningHere?: (runId: string) => boolean;
  } = {},
): AutomationStores {
  const blobs = new PgBlobStore(
    db,
    options.blobChunkBytes === undefined ? {} : { chunkBytes: options.blobChunkBytes },
  );
  return {
    automations: new PgAutomationStore(db, options.registryCache),
    registrySources: new PgRegistrySourceStore(db, blobs),
    runs: new PgRunStore(db, {
      ...(options.listScanLimit === undefined ? {} : { listScanLimit: options.listScanLimit }),
      ...(options.runningHere ? { runningHere: options.runningHere } : {}),
    }),
    scores: new PgScoreStore(db),
    files: new PgFileStore(db, blobs),
    examples: new PgExampleStore(db, blobs),
    experiments: new PgExperimentStore(db),
    evaluatorConfigs: new PgEvaluatorConfigStore(db),
    reviews: new PgReviewStore(db),
    emailMessages: new PgEmailMessageStore(db),
    schedules: new PgScheduleStore(db),
    blobs,
    retention: new PgRetentionStore(db, blobs),
    close: () => db.close(),
  };
}
