// The quality half of the automation service: dataset examples and archives, evaluator
// configuration, experiments, reviews and review health. It plugs into startAutomation as a
// RouteContributor; the evaluator worker pool is the service's (AutomationCore.evalPool).

import type { AutomationCore, RouteContributor } from './index.js';
import type { ApiRoute } from './http/api.js';
import type { BlobStore } from './files/blob-store.js';
import type { AutomationRegistry } from './registry/service.js';
import type { RunService } from './runs/service.js';
import type { ScoreStore } from './runs/scores.js';
import type { AutomationSettings } from './settings.js';
import type { ModelProvider, ScriptPool } from './evals/index.js';
import { createJudgeProvider } from './experiments/judge-provider.js';
import type { ArchiveLimits } from './archives/limits.js';
import type { ArchivePool } from './archives/pool.js';
import { datasetRoutes } from './datasets/routes.js';
import type { ExampleStore } from './datasets/store.js';
import type { ExampleRecord } from './datasets/types.js';
import { EvaluatorConfigs } from './experiments/evaluator-service.js';
import { evaluatorRoutes } from './experiments/evaluator-routes.js';
import { experimentRoutes } from './experiments/routes.js';
import { ExperimentRunner } from './experiments/runner.js';
import { RunScorer } from './experiments/scoring.js';
import { reviewRoutes } from './reviews/routes.js';
import type { ReviewStore } from './reviews/store.js';
import { createLogger, type Logger } from '../core/log.js';

/** Everything the quality routes use, built once per service. */
export interface QualityContext {
  settings: AutomationSettings;
  registry: AutomationRegistry;
  runs: RunService;
  scores: ScoreStore;
  blobs: BlobStore;
  tmpDir: string;
  examples: ExampleStore;
  evaluators: EvaluatorConfigs;
  experiments: ExperimentRunner;
  reviews: ReviewStore;
  scorer: RunScorer;
  archiveLimits: ArchiveLimits;
  archives: ArchivePool;
  experimentConcurrency: number;
  log: Logger;
  /** Removes a blob written for a request if nothing came to reference it. */
  discardBlob(sha256: string): Promise<void>;
  /** Scores a run against its example once it finishes (runs started outside experiments). */
  scoreWhenDone(runId: string, example: ExampleRecord): void;
}

export function buildQualityContext(
  core: AutomationCore,
  deps: { tmpDir: string },
  provider: ModelProvider = createJudgeProvider(core.settings),
): { q: QualityContext; pool: ScriptPool } {
  const log = createLogger('automation-quality');
  const pool = core.evalPool;
  const blobs = core.files.blobs;
  const examples = core.stores.examples;
  const evaluators = new EvaluatorConfigs(core.stores.evaluatorConfigs, {
    customScripts: pool.customScripts,
  });
  const scorer = new RunScorer({ runs: core.runs, scores: core.scores, blobs, evaluators, pool, provider });
  const onError = (err: unknown, experimentId: string) =>
    log.warn({ err, experimentId }, 'experiment step failed');
  const experiments = new ExperimentRunner({
    store: core.stores.experiments,
    examples,
    runs: core.runs,
    blobs,
    scorer,
    onError,
  });
  const q: QualityContext = {
    settings: core.settings,
    registry: core.registry,
    runs: core.runs,
    scores: core.scores,
    blobs,
    tmpDir: deps.tmpDir,
    examples,
    evaluators,
    experiments,
    reviews: core.reviews,
    scorer,
    archiveLimits: core.settings.archiveLimits,
    archives: core.archives,
    experimentConcurrency: core.settings.experimentConcurrency,
    log,
    discardBlob: (sha) => core.files.discardIfUnreferenced(sha),
    scoreWhenDone(runId, example) {
      void core.runs
        .waitFor(runId, 0)
        .then((run) => scorer.score(run, example))
        .catch((err: unknown) => log.warn({ err, runId }, 'cannot score an example run'));
    },
  };
  return { q, pool };
}

/**
 * The RouteContributor startAutomation registers; it closes its experiments on shutdown. Its
 * settings come from `core.settings` (src/automation/settings.ts).
 */
export function qualityContributor(): RouteContributor {
  return (core, deps): ApiRoute[] => {
    const { q } = buildQualityContext(core, deps);
    void q.experiments.recover().then(
      (n) =>
        n > 0 && q.log.info({ experiments: n }, 'experiments cut off by the last stop closed as interrupted'),
      (err: unknown) => q.log.error({ err }, 'cannot recover experiments'),
    );
    deps.onClose?.(async () => {
      await q.experiments.close();
    });
    return [...datasetRoutes(q), ...evaluatorRoutes(q), ...experimentRoutes(q), ...reviewRoutes(q)];
  };
}
