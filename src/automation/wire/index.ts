// The public wire format in one import: every named schema, and the operation table.

import type { TSchema } from '@sinclair/typebox';
import { AUTOMATION_SCHEMAS } from './automations.js';
import { COMMON_SCHEMAS } from './common.js';
import { DATASET_SCHEMAS } from './datasets.js';
import { EXPERIMENT_SCHEMAS } from './experiments.js';
import { FILE_SCHEMAS } from './files.js';
import { REVIEW_SCHEMAS } from './reviews.js';
import { RUN_SCHEMAS } from './runs.js';

export * from './automations.js';
export * from './common.js';
export * from './datasets.js';
export * from './experiments.js';
export * from './files.js';
export * from './json-schema.js';
export * from './operations.js';
export * from './reviews.js';
export * from './runs.js';

/** Every named wire schema, each with the SDK type name as its `$id`. */
export const WIRE_SCHEMAS: readonly TSchema[] = [
  ...COMMON_SCHEMAS,
  ...AUTOMATION_SCHEMAS,
  ...RUN_SCHEMAS,
  ...REVIEW_SCHEMAS,
  ...DATASET_SCHEMAS,
  ...EXPERIMENT_SCHEMAS,
  ...FILE_SCHEMAS,
];
