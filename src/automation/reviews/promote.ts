// Promotion of a finished run to a dataset example (POST /runs/{id}/promote): the run's input
// args and input files, and as the expectation the review's corrected output and corrected
// files, or the run's own output and output files when the review has none. The example is
// named by the request; an example of that name in the caller's dataset of the automation is
// updated in place (keeping its id, position and creation time), otherwise one is created.

import { createExample } from '../datasets/example.js';
import { newExampleId, type ExampleStore } from '../datasets/store.js';
import type { ExampleFileRef } from '../datasets/types.js';
import { notFound } from '../errors.js';
import type { BlobStore } from '../files/blob-store.js';
import type { AutomationRegistry } from '../registry/service.js';
import type { RunService } from '../runs/service.js';
import type { RunRecord } from '../runs/types.js';
import type { PromoteRunRequest, PromoteRunResponse } from '../wire/reviews.js';
import type { ExpectedFileBytes } from './expected-files.js';
import type { ReviewService } from './service.js';

export interface PromoteDeps {
  reviews: ReviewService;
  runs: Pick<RunService, 'getDetail'>;
  registry: Pick<AutomationRegistry, 'get'>;
  examples: ExampleStore;
  blobs: BlobStore;
  files: ExpectedFileBytes;
  /** Removes a blob written for the request if nothing came to reference it. */
  discardBlob(sha256: string): Promise<void>;
}

export async function promoteRun(
  d: PromoteDeps,
  tenant: string,
  runId: string,
  body: PromoteRunRequest,
): Promise<PromoteRunResponse> {
  const run = await d.reviews.finishedRun(tenant, runId);
  const automation = await d.registry.get(run.automationId);
  if (!automation) throw notFound(`automation ${run.automationId}`, 'id');
  const review = await d.reviews.review(run);
  const detail = await d.runs.getDetail(run.id);
  const name = body.name ?? `run ${run.id}`;
  const existing = (await d.examples.list(tenant, run.automationId)).find((e) => e.name === name);

  const staged: string[] = [];
  const keep = async (chunks: AsyncIterable<Buffer> | undefined, contentType: string) => {
    if (!chunks) return undefined;
    const blob = await d.blobs.write(chunks);
    staged.push(blob.sha256);
    const ref: ExampleFileRef = { sha256: blob.sha256, size: blob.size, contentType };
    return ref;
  };
  try {
    const input: Record<string, ExampleFileRef> = {};
    for (const f of detail?.input.files ?? []) {
      const ref = await keep(await d.files.readRunFile(run.id, f), f.contentType);
      if (ref) input[f.path.replace(/^input\//, '')] = ref;
    }
    const expected: Record<string, ExampleFileRef> = {};
    if (review && review.expectedFiles.length > 0) {
      for (const f of review.expectedFiles) {
        const ref = await keep(await d.files.read(run.id, f), f.contentType);
        if (ref) expected[f.name] = ref;
      }
    } else {
      for (const f of outputFiles(run)) {
        const ref = await keep(await d.files.readRunFile(run.id, f), f.contentType);
        if (ref) expected[f.name] = ref;
      }
    }
    const example = createExample(
      tenant,
      { id: run.automationId, type: run.type },
      {
        id: existing?.id ?? newExampleId(),
        name,
        input: detail?.input.args ?? {},
        expected: review?.correctedOutput !== undefined ? review.correctedOutput : run.output,
        metadata: {
          ...existing?.metadata,
          promotedFromRunId: run.id,
          reviewVerdict: review?.verdict ?? null,
        },
        annotation: review && review.note !== '' ? review.note : null,
        rowOrder: existing?.rowOrder ?? (await d.examples.nextRowOrder(tenant, run.automationId)),
        overrides: detail && Object.keys(detail.overrides).length > 0 ? detail.overrides : null,
        latestRunId: run.id,
        createdAt: existing?.createdAt,
        files: { input, expected },
      },
    );
    await d.examples.put(example);
    return {
      automationId: run.automationId,
      automationType: automation.type,
      exampleId: example.id,
      name: example.name,
    };
  } finally {
    // Blobs the example now references stay; the rest of what was written goes.
    for (const sha of staged) await d.discardBlob(sha);
  }
}

const outputFiles = (run: RunRecord) => run.files.filter((f) => f.role === 'output');
