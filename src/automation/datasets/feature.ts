// The datasets feature: a tenant's examples of an automation, their input and expected files,
// example runs (scored once they finish, with the evaluators feature's scoring) and dataset
// import/export as ZIP archives.

import type { Feature, FeatureHost } from '../feature-host.js';
import type { EvaluatorsFeature } from '../evaluators/feature.js';
import { datasetRoutes, type DatasetRoutesHost } from './routes.js';
import { DatasetService } from './service.js';

export type DatasetsHost = DatasetRoutesHost & Pick<FeatureHost, 'runs'>;

export function datasetsFeature(
  host: DatasetsHost,
  scoring: Pick<EvaluatorsFeature, 'scoreWhenDone'>,
): Feature {
  const datasets = new DatasetService({
    examples: host.stores.examples,
    blobs: host.stores.blobs,
    runs: host.runs,
    discardBlob: (sha) => host.discardBlob(sha),
    scoreWhenDone: (runId, example) => scoring.scoreWhenDone(runId, example),
  });
  return { routes: datasetRoutes(host, datasets) };
}
