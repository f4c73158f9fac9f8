// The experiments feature: a run of an automation over its dataset examples, each run scored by
// the evaluators feature, with its detail, cancel and exports. Experiments a stop cut off are
// closed as interrupted at start; the ones in flight stop like a cancel when the service closes.

import type { Feature, FeatureHost } from '../feature-host.js';
import type { EvaluatorsFeature } from '../evaluators/feature.js';
import { experimentRoutes } from './routes.js';
import { ExperimentRunner } from './runner.js';
import { ExperimentService } from './service.js';

export type ExperimentsHost = Pick<
  FeatureHost,
  'settings' | 'stores' | 'registry' | 'runs' | 'log' | 'onClose'
>;

export function experimentsFeature(
  host: ExperimentsHost,
  scoring: Pick<EvaluatorsFeature, 'scorer'>,
): Feature {
  const { stores, runs, log } = host;
  const runner = new ExperimentRunner({
    store: stores.experiments,
    examples: stores.examples,
    runs,
    blobs: stores.blobs,
    scorer: scoring.scorer,
    onError: (err, experimentId) => log.warn({ err, experimentId }, 'experiment step failed'),
  });
  void runner.recover().then(
    (n) =>
      n > 0 && log.info({ experiments: n }, 'experiments cut off by the last stop closed as interrupted'),
    (err: unknown) => log.error({ err }, 'cannot recover experiments'),
  );
  host.onClose(() => runner.close());
  const service = new ExperimentService({
    registry: host.registry,
    examples: stores.examples,
    runs,
    scores: stores.scores,
    runner,
    defaultConcurrency: host.settings.experimentConcurrency,
  });
  return { routes: experimentRoutes(service) };
}
