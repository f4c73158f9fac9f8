// The evaluators feature: a tenant's evaluator configuration of an automation (GET/PUT
// /automations/{id}/evaluators) and the scoring of finished runs with it, which the datasets
// feature (example runs) and the experiments feature use. The evaluator library itself is
// src/automation/evals/; this is the part of the service around it.

import type { Feature, FeatureHost } from '../feature-host.js';
import type { ExampleRecord } from '../datasets/types.js';
import type { ModelProvider } from '../evals/index.js';
import { createJudgeProvider } from './judge-provider.js';
import { evaluatorRoutes } from './routes.js';
import { RunScorer } from './scoring.js';
import { EvaluatorConfigs } from './service.js';

export type EvaluatorsHost = Pick<
  FeatureHost,
  'settings' | 'stores' | 'registry' | 'runs' | 'evalPool' | 'log'
>;

export interface EvaluatorsFeature extends Feature {
  /** Scores a finished run against its example with its tenant's evaluators, and records the results. */
  scorer: RunScorer;
  /** Scores a run against its example once it finishes (runs started outside experiments). */
  scoreWhenDone(runId: string, example: ExampleRecord): void;
}

/** `provider` answers llm-judge evaluators; by default the one the settings name (judge-provider.ts). */
export function evaluatorsFeature(
  host: EvaluatorsHost,
  provider: ModelProvider = createJudgeProvider(host.settings),
): EvaluatorsFeature {
  const { runs, evalPool: pool, log } = host;
  // Stored configs with scripts still load with custom scripts off; the pool refuses to run them.
  const evaluators = new EvaluatorConfigs(host.stores.evaluatorConfigs, {
    customScripts: pool.customScripts,
  });
  const scorer = new RunScorer({
    runs,
    scores: host.stores.scores,
    blobs: host.stores.blobs,
    evaluators,
    pool,
    provider,
  });
  return {
    routes: evaluatorRoutes(host.registry, evaluators),
    scorer,
    scoreWhenDone(runId, example) {
      void runs
        .waitFor(runId, 0)
        .then((run) => scorer.score(run, example))
        .catch((err: unknown) => log.warn({ err, runId }, 'cannot score an example run'));
    },
  };
}
