// Human review shapes: the review a run carries, review requests, corrected (expected) files,
// promotion to a dataset example and the per-automation review health report.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Body, Closed, FilePart, Nullable, Num, OneOf, RunFile, Str } from './common.js';

const Verdict = OneOf(['correct', 'incorrect'] as const);
const ReviewStatus = OneOf(['open', 'closed', 'wont_fix'] as const);

export const RunReviewCorrection = Closed(
  {
    id: Str(),
    kind: OneOf(['field', 'file'] as const),
    path: Str('JSON Pointer for field corrections, or canonical artifact path for file reviews.'),
    label: Nullable(Str()),
    // `unknown | null` is just unknown: any JSON value, null included.
    originalValue: Type.Optional(Type.Unknown()),
    correctedValue: Type.Optional(Type.Unknown()),
    note: Str(),
    correctedArtifactPath: Type.Optional(Nullable(Str())),
    createdAt: Str(),
    updatedAt: Str(),
  },
  { $id: 'RunReviewCorrection' },
);
export type RunReviewCorrection = Static<typeof RunReviewCorrection>;

export const RunReview = Closed(
  {
    id: Str(),
    verdict: Nullable(Verdict),
    status: ReviewStatus,
    note: Str(),
    correctedOutput: Type.Optional(Type.Unknown()),
    reviewedBy: Nullable(Str('User id of the last reviewer (read-only).')),
    reviewedByEmail: Nullable(Str('Email of the last reviewer (read-only).')),
    reviewedAt: Str(),
    closedBy: Nullable(Str('User id recorded when the review was closed (read-only).')),
    closedByEmail: Nullable(Str('Email recorded when the review was closed (read-only).')),
    closedAt: Nullable(Str()),
    closedNote: Nullable(Str()),
    createdAt: Str(),
    updatedAt: Str(),
    corrections: Type.Array(RunReviewCorrection),
  },
  { $id: 'RunReview' },
);
export type RunReview = Static<typeof RunReview>;

export const RunReviewDetail = Closed(
  {
    review: Nullable(RunReview, {
      description:
        'Review metadata and corrections. Corrected files are listed at GET /runs/{id}/reviews/expected.',
    }),
  },
  { $id: 'RunReviewDetail' },
);
export type RunReviewDetail = Static<typeof RunReviewDetail>;

export const RunReviewExpectedArtifacts = Closed(
  { files: Type.Array(RunFile, { description: 'Corrected artifact files attached to the run review.' }) },
  { $id: 'RunReviewExpectedArtifacts' },
);
export type RunReviewExpectedArtifacts = Static<typeof RunReviewExpectedArtifacts>;

// Both are aliases of RunFile in the SDK; they get their own names so the OpenAPI document
// keeps the SDK's vocabulary.
export const RunReviewExpectedFileMutationResponse = Closed(
  { ...RunFile.properties },
  {
    $id: 'RunReviewExpectedFileMutationResponse',
    description: 'Corrected file created or renamed by the request.',
  },
);
export type RunReviewExpectedFileMutationResponse = Static<typeof RunReviewExpectedFileMutationResponse>;

export const RunReviewExpectedFileUpdateResponse = Closed(
  { ...RunFile.properties },
  { $id: 'RunReviewExpectedFileUpdateResponse', description: 'Corrected file after the rename.' },
);
export type RunReviewExpectedFileUpdateResponse = Static<typeof RunReviewExpectedFileUpdateResponse>;

export const RunReviewRequest = Body(
  {
    verdict: Type.Optional(
      Nullable(Verdict, { description: 'Omit or null for feedback without a ranking (nit).' }),
    ),
    status: Type.Optional(ReviewStatus),
    note: Type.Optional(Nullable(Str())),
    correctedOutput: Type.Optional(Type.Unknown({ description: 'Null clears a stored correction.' })),
    corrections: Type.Optional(
      Type.Array(
        Body({
          id: Type.Optional(Str()),
          kind: OneOf(['field', 'file'] as const),
          path: Str(),
          label: Type.Optional(Nullable(Str())),
          originalValue: Type.Optional(Type.Unknown()),
          correctedValue: Type.Optional(Type.Unknown()),
          note: Type.Optional(Nullable(Str())),
          correctedArtifactPath: Type.Optional(Nullable(Str())),
        }),
        { description: 'When present, replaces the entire correction set.' },
      ),
    ),
  },
  { $id: 'RunReviewRequest' },
);
export type RunReviewRequest = Static<typeof RunReviewRequest>;

export const RunReviewExpectedFileCopyRequest = Body(
  {
    outputFileName: Str('Name of an existing run output file to copy into corrected artifacts.'),
    expectedName: Type.Optional(Str('Name for the copied file; defaults to the output file name.')),
  },
  { $id: 'RunReviewExpectedFileCopyRequest' },
);
export type RunReviewExpectedFileCopyRequest = Static<typeof RunReviewExpectedFileCopyRequest>;

export const RunReviewExpectedFileUploadRequest = Body(
  {
    file: FilePart('Corrected artifact file to upload.'),
    name: Type.Optional(Str('Stored corrected file name; defaults to the uploaded filename.')),
  },
  { $id: 'RunReviewExpectedFileUploadRequest' },
);
export type RunReviewExpectedFileUploadRequest = Static<typeof RunReviewExpectedFileUploadRequest>;

export const RunReviewExpectedFileUpdateRequest = Body(
  { name: Str('New corrected file name.') },
  { $id: 'RunReviewExpectedFileUpdateRequest' },
);
export type RunReviewExpectedFileUpdateRequest = Static<typeof RunReviewExpectedFileUpdateRequest>;

export const PromoteRunRequest = Body(
  { name: Type.Optional(Str('Dataset example name to create or update; generated when omitted.')) },
  { $id: 'PromoteRunRequest' },
);
export type PromoteRunRequest = Static<typeof PromoteRunRequest>;

export const PromoteRunResponse = Closed(
  {
    automationId: Str('Automation that owns the promoted example.'),
    automationType: OneOf(['workflow', 'agent'] as const),
    exampleId: Str('Dataset example identifier.'),
    name: Nullable(Str()),
  },
  { $id: 'PromoteRunResponse' },
);
export type PromoteRunResponse = Static<typeof PromoteRunResponse>;

const RatioOrNull = Nullable(Num());

export const RunReviewHealthConfidence = Closed(
  { lower: RatioOrNull, upper: RatioOrNull, method: Type.Literal('wilson') },
  {
    $id: 'RunReviewHealthConfidence',
    description: 'Wilson score interval for reviewed correctness; null bounds mean no reviewed runs.',
  },
);
export type RunReviewHealthConfidence = Static<typeof RunReviewHealthConfidence>;

const CountFields = {
  totalRuns: Num(),
  reviewedRuns: Num('Runs with a ranked verdict; null verdicts (nit) are excluded.'),
  reviewCoverage: RatioOrNull,
  correctReviews: Num(),
  incorrectReviews: Num(),
  nitReviews: Num('Runs with a review row and null verdict (nit).'),
  reviewedCorrectness: RatioOrNull,
};

export const RunReviewHealthSummary = Closed(
  { ...CountFields, confidence: RunReviewHealthConfidence },
  { $id: 'RunReviewHealthSummary' },
);
export type RunReviewHealthSummary = Static<typeof RunReviewHealthSummary>;

export const RunReviewHealthBucket = Closed(
  { start: Str(), end: Str(), ...CountFields },
  { $id: 'RunReviewHealthBucket' },
);
export type RunReviewHealthBucket = Static<typeof RunReviewHealthBucket>;

export const RunReviewHealthRollingPoint = Closed(
  {
    at: Str(),
    reviewedRuns: Num('Runs with a ranked verdict; null verdicts (nit) are excluded.'),
    correctReviews: Num(),
    reviewedCorrectness: Num(),
    confidenceLower: Num(),
    confidenceUpper: Num(),
    totalRunsInWindow: Num('Total production runs in the rolling window ending at this point.'),
    reviewCoverage: Num('Share of runs in the rolling window that were reviewed (0-1).'),
  },
  { $id: 'RunReviewHealthRollingPoint' },
);
export type RunReviewHealthRollingPoint = Static<typeof RunReviewHealthRollingPoint>;

export const RunReviewHealthResponse = Closed(
  {
    timeRange: Closed({ from: Str(), to: Str() }),
    granularity: Closed({
      bucket: OneOf(['day', 'week', 'month'] as const),
      rollingWindow: Num(),
      minRollingReviews: Num(),
    }),
    summary: RunReviewHealthSummary,
    buckets: Type.Array(RunReviewHealthBucket),
    rolling: Type.Array(RunReviewHealthRollingPoint),
  },
  { $id: 'RunReviewHealthResponse' },
);
export type RunReviewHealthResponse = Static<typeof RunReviewHealthResponse>;

export const REVIEW_SCHEMAS: readonly TSchema[] = [
  RunReviewCorrection,
  RunReview,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileMutationResponse,
  RunReviewExpectedFileUpdateResponse,
  RunReviewRequest,
  RunReviewExpectedFileCopyRequest,
  RunReviewExpectedFileUploadRequest,
  RunReviewExpectedFileUpdateRequest,
  PromoteRunRequest,
  PromoteRunResponse,
  RunReviewHealthConfidence,
  RunReviewHealthSummary,
  RunReviewHealthBucket,
  RunReviewHealthRollingPoint,
  RunReviewHealthResponse,
];
