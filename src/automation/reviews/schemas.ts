// Request schemas of the review routes that the wire schemas (src/automation/wire) do not give:
// the review health query, with the SDK's camelCase names (snake_case folds onto them, see
// http/validate.ts) and bounds on what ends up in index scans.

import { Type } from '@sinclair/typebox';
import { IdListString, MAX_REF_CHARS, MAX_TOKEN_CHARS, TokenListString } from '../http/ids.js';

const Time = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const HealthQuery = Type.Object({
  type: Type.Optional(TokenListString('Comma-separated: workflow,agent.')),
  status: Type.Optional(TokenListString('Comma-separated execution statuses.')),
  trigger: Type.Optional(TokenListString('Comma-separated trigger types.')),
  triggeredBy: Type.Optional(
    TokenListString('Comma-separated user ids, or __system__ for system-triggered runs.'),
  ),
  sourceRef: Type.Optional(Type.String({ maxLength: MAX_REF_CHARS })),
  batchId: Type.Optional(IdListString()),
  exampleId: Type.Optional(IdListString()),
  exampleIdContains: Type.Optional(Type.String({ maxLength: MAX_TOKEN_CHARS })),
  from: Time('Start of the run-created time range. Defaults to now-30d.'),
  to: Time('End of the run-created time range. Defaults to now.'),
  completedAfter: Time('Runs completed at or after this time.'),
  completedBefore: Time('Runs completed at or before this time.'),
  experiments: Type.Optional(Type.Boolean({ description: 'false excludes experiment batch runs.' })),
  bucket: Type.Optional(
    Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], {
      description: 'Calendar bucket size. Defaults to day.',
    }),
  ),
  rollingWindow: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'Ranked reviews per rolling point. Defaults to 100.',
    }),
  ),
  minRollingReviews: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'Fewest ranked reviews a rolling point needs. Defaults to 1.',
    }),
  ),
});
