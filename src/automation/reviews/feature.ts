// The reviews feature: the review of a finished run, its corrected (expected) files kept in the
// run's own folder, promotion of a run to a dataset example, and an automation's review health.

import { join } from 'node:path';
import type { Feature, FeatureHost } from '../feature-host.js';
import { RunFolderExpectedFiles } from './expected-files.js';
import { reviewRoutes } from './routes.js';
import { ReviewService } from './service.js';

export type ReviewsHost = Pick<
  FeatureHost,
  'settings' | 'stores' | 'registry' | 'runs' | 'tmpDir' | 'discardBlob'
>;

export function reviewsFeature(host: ReviewsHost): Feature {
  const { runs, registry, stores } = host;
  const files = new RunFolderExpectedFiles(
    (id) => runs.runDir(id),
    (id, file) => runs.localFile({ id }, file),
    join(host.tmpDir, 'review-uploads'),
    stores.blobs,
    runs.sharesFiles,
  );
  const reviews = new ReviewService({ runs, store: stores.reviews, files });
  return {
    routes: reviewRoutes({
      settings: host.settings,
      reviews,
      promote: {
        reviews,
        runs,
        registry,
        examples: stores.examples,
        blobs: stores.blobs,
        files,
        discardBlob: (sha) => host.discardBlob(sha),
      },
      health: { registry, runs },
    }),
  };
}
