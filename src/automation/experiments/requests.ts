// Request schemas of the experiment routes, as the product SDK sends them (ExperimentCreate,
// the list and export queries of types.gen.ts), with the service's own bounds on identifiers
// and concurrency. The route contract validates against them; the service takes their static types.

import { Type, type Static } from '@sinclair/typebox';
import { IdString, RefString } from '../http/ids.js';

/**
 * ExperimentCreate. Unknown fields are refused rather than ignored: a misspelt `examples`
 * (say `exampleIds`) would otherwise run the whole dataset.
 */
export const ExperimentCreateBody = Type.Object(
  {
    examples: Type.Optional(
      Type.Array(IdString('dataset example id'), {
        maxItems: 100_000,
        description: 'Dataset example ids to run; omit to run the full dataset.',
      }),
    ),
    batchConcurrency: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 256 }), Type.Null()], {
        description: 'Maximum concurrent example runs (null or absent: AUTOMATION_EXPERIMENT_CONCURRENCY).',
      }),
    ),
    sourceRef: Type.Optional(RefString('Release version, `latest` or a git ref the runs use.')),
  },
  { additionalProperties: false, description: 'Request body for starting an experiment batch.' },
);
export type ExperimentCreateBody = Static<typeof ExperimentCreateBody>;

export const ExperimentListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'default 50' })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  fromDate: Type.Optional(
    Type.String({ maxLength: 64, description: 'created at or after: a date, time or relative date (-7d)' }),
  ),
  toDate: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'created at or before: a date (whole day), time or relative date',
    }),
  ),
});
export type ExperimentListQuery = Static<typeof ExperimentListQuery>;

export const ExportFormat = Type.Union([Type.Literal('csv'), Type.Literal('json')]);
export type ExportFormat = Static<typeof ExportFormat>;

export const ExportAllQuery = Type.Object({ format: ExportFormat });

export const ExportQuery = Type.Object({
  format: ExportFormat,
  includeTrace: Type.Optional(
    Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')], {
      description: 'accepted for the SDK; the rows are the same either way',
    }),
  ),
});
