// The automation section: the catalogue, runs and their reviews, datasets, evaluator configs,
// experiments and review health, as routes under #/automation (contract: ../section.ts).

import type { Section } from '../section.js';
import { AutomationList, AutomationOverview } from './automations.js';
import { Dataset, ExampleDetail } from './datasets.js';
import { Evaluators } from './evaluators.js';
import { ExperimentCompare } from './experiment-compare-view.js';
import { ExperimentList, ExperimentView, NewExperiment } from './experiments.js';
import { Health } from './health.js';
import { RunDetail } from './run-detail.js';
import { ReviewQueue } from './review-queue.js';
import { RunList } from './runs.js';
import './automation.css';

export const automationSection: Section = {
  id: 'automation',
  title: 'Automation',
  routes: [
    {
      pattern: '/',
      title: 'Automations',
      nav: true,
      render: ({ query }) => <AutomationList query={query} />,
    },
    { pattern: '/runs', title: 'Runs', nav: true, render: ({ query }) => <RunList query={query} /> },
    {
      pattern: '/runs/:id',
      title: 'Run',
      render: ({ params, query }) => <RunDetail key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id',
      title: 'Automation',
      render: ({ params }) => <AutomationOverview key={params.id} id={params.id!} />,
    },
    {
      pattern: '/automations/:id/dataset',
      title: 'Dataset',
      render: ({ params, query }) => <Dataset key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id/dataset/:exampleId',
      title: 'Example',
      render: ({ params }) => (
        <ExampleDetail key={params.exampleId} id={params.id!} exampleId={params.exampleId!} />
      ),
    },
    {
      pattern: '/automations/:id/evaluators',
      title: 'Evaluators',
      render: ({ params }) => <Evaluators key={params.id} id={params.id!} />,
    },
    {
      pattern: '/automations/:id/experiments',
      title: 'Experiments',
      render: ({ params, query }) => <ExperimentList key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id/experiments/compare',
      title: 'Compare experiments',
      render: ({ params, query }) => <ExperimentCompare key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id/experiments/new',
      title: 'New experiment',
      render: ({ params, query }) => <NewExperiment key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id/experiments/:experimentId',
      title: 'Experiment',
      render: ({ params }) => (
        <ExperimentView key={params.experimentId} id={params.id!} experimentId={params.experimentId!} />
      ),
    },
    {
      pattern: '/automations/:id/review',
      title: 'Review queue',
      render: ({ params, query }) => <ReviewQueue key={params.id} id={params.id!} query={query} />,
    },
    {
      pattern: '/automations/:id/health',
      title: 'Review health',
      render: ({ params, query }) => <Health key={params.id} id={params.id!} query={query} />,
    },
  ],
};
