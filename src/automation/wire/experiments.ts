// Experiment (batch eval) and evaluator configuration shapes.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AutomationType, Body, Closed, Nullable, Num, OneOf, Str } from './common.js';
import { EvalResult } from './runs.js';

export const ExperimentCreate = Body(
  {
    examples: Type.Optional(
      Type.Array(Str(), { description: 'Dataset example ids; omit to run the full dataset.' }),
    ),
    batchConcurrency: Type.Optional(Nullable(Num('Maximum concurrent example runs for this experiment.'))),
    sourceRef: Type.Optional(Str('Source version/ref to use for experiment runs.')),
  },
  { $id: 'ExperimentCreate', description: 'Request body for starting an experiment batch.' },
);
export type ExperimentCreate = Static<typeof ExperimentCreate>;

const ExperimentFields = {
  id: Str('Experiment batch id.'),
  automationId: Str('Automation this experiment belongs to.'),
  automationType: AutomationType,
  status: OneOf(['queued', 'running', 'completed'] as const),
  runCount: Num('Total runs in the experiment.'),
  completedCount: Num('Runs that have completed.'),
  passedCount: Num('Runs whose evaluator scores passed.'),
  failedCount: Num('Runs whose evaluator scores failed.'),
  avgScore: Nullable(Num('Average automated evaluator score.')),
  createdAt: Str(),
  completedAt: Nullable(Str()),
  version: Nullable(Str()),
};

export const Experiment = Closed(ExperimentFields, {
  $id: 'Experiment',
  description: 'Experiment batch summary for an automation dataset run.',
});
export type Experiment = Static<typeof Experiment>;

export const ExperimentDetail = Closed(
  {
    ...ExperimentFields,
    runs: Type.Array(
      Closed({
        id: Str('Run id created for the experiment.'),
        status: Str('Current run status.'),
        exampleId: Nullable(Str()),
        exampleName: Nullable(Str()),
        createdAt: Str(),
        completedAt: Nullable(Str()),
      }),
    ),
    resultsByRun: Type.Record(Type.String(), Type.Array(EvalResult), {
      description: 'Evaluator results keyed by run id.',
    }),
  },
  { $id: 'ExperimentDetail' },
);
export type ExperimentDetail = Static<typeof ExperimentDetail>;

export const ExperimentCreateResponse = Closed(
  {
    id: Str('Experiment batch id.'),
    runs: Type.Array(Closed({ id: Str('Run id.'), exampleId: Nullable(Str('Dataset example id.')) })),
    total: Num('Number of runs enqueued.'),
  },
  { $id: 'ExperimentCreateResponse' },
);
export type ExperimentCreateResponse = Static<typeof ExperimentCreateResponse>;

/** The SDK declares this 200 body inline; its alias type is AutomationsExperimentsListResponse. */
export const AutomationsExperimentsListResponse = Closed(
  { data: Type.Array(Experiment), total: Num(), limit: Num(), offset: Num() },
  { $id: 'AutomationsExperimentsListResponse' },
);
export type AutomationsExperimentsListResponse = Static<typeof AutomationsExperimentsListResponse>;

export const ExperimentRef = Closed({ id: Str(), automationId: Str() }, { $id: 'ExperimentRef' });
export type ExperimentRef = Static<typeof ExperimentRef>;

export const EvaluatorConfigResponse = Closed(
  {
    automationId: Str('Automation that owns this evaluator config.'),
    automationType: AutomationType,
    yaml: Str('Evaluator configuration YAML.'),
    config: Closed({
      evaluators: Type.Array(Type.Unknown(), { description: 'Parsed evaluator definitions.' }),
      passThreshold: Num('Overall score threshold required for the experiment to pass.'),
    }),
  },
  { $id: 'EvaluatorConfigResponse' },
);
export type EvaluatorConfigResponse = Static<typeof EvaluatorConfigResponse>;

export const EvaluatorConfigUpdate = Body(
  { yaml: Str('Complete evaluator YAML to validate and store.') },
  { $id: 'EvaluatorConfigUpdate', description: 'Replacement evaluator configuration.' },
);
export type EvaluatorConfigUpdate = Static<typeof EvaluatorConfigUpdate>;

export const EXPERIMENT_SCHEMAS: readonly TSchema[] = [
  ExperimentCreate,
  Experiment,
  ExperimentDetail,
  ExperimentCreateResponse,
  AutomationsExperimentsListResponse,
  ExperimentRef,
  EvaluatorConfigResponse,
  EvaluatorConfigUpdate,
];
