// The run list's filters: each is a query parameter of GET /api/v1/runs under the name the API
// takes (camelCase), and the same name in the console's hash, so a filtered view is a link.

export type FilterKind = 'text' | 'search' | 'time' | 'bool' | 'choice' | 'number';

export interface FilterSpec {
  name: string;
  label: string;
  kind: FilterKind;
  /** For `choice`: the values offered (the API takes comma lists of them). */
  choices?: string[];
  hint?: string;
  /** Shown without opening "more filters". */
  main?: boolean;
}

const TIME_HINT = 'ISO date or time, epoch ms, or relative (-7d, 24h)';

export const RUN_FILTERS: FilterSpec[] = [
  // One box over several fields: the API's `search` (run id, example id, review note or an input
  // metadata string contains it, any case), combined with every other filter.
  {
    name: 'search',
    label: 'Search runs',
    kind: 'search',
    main: true,
    hint: 'part of a run id, example id, review note or metadata value',
  },
  {
    name: 'status',
    label: 'Status',
    kind: 'choice',
    main: true,
    choices: ['created', 'pending', 'running', 'completed', 'failed', 'cancelled'],
  },
  { name: 'source', label: 'Automation', kind: 'text', main: true, hint: 'ids or aliases, comma separated' },
  { name: 'type', label: 'Type', kind: 'choice', main: true, choices: ['workflow', 'agent'] },
  { name: 'from', label: 'Created from', kind: 'time', main: true, hint: TIME_HINT },
  { name: 'to', label: 'Created to', kind: 'time', main: true, hint: TIME_HINT },
  {
    name: 'trigger',
    label: 'Trigger',
    kind: 'choice',
    choices: ['api', 'cli', 'experiment'],
  },
  { name: 'triggeredBy', label: 'Triggered by', kind: 'text', hint: 'user ids, or system' },
  { name: 'sourceRef', label: 'Version or ref', kind: 'text' },
  { name: 'batchId', label: 'Batch (experiment) id', kind: 'text' },
  { name: 'exampleId', label: 'Example id', kind: 'text' },
  { name: 'exampleIdContains', label: 'Example id contains', kind: 'text' },
  { name: 'ids', label: 'Run ids', kind: 'text', hint: 'comma separated' },
  { name: 'completedAfter', label: 'Completed after', kind: 'time', hint: TIME_HINT },
  { name: 'completedBefore', label: 'Completed before', kind: 'time', hint: TIME_HINT },
  { name: 'experiments', label: 'Experiment runs', kind: 'choice', choices: ['true', 'false'] },
  { name: 'hasReview', label: 'Reviewed', kind: 'bool' },
  { name: 'noReview', label: 'Not reviewed', kind: 'bool' },
  { name: 'reviewStatus', label: 'Review status', kind: 'choice', choices: ['open', 'closed', 'wont_fix'] },
  {
    name: 'reviewVerdict',
    label: 'Review verdict',
    kind: 'choice',
    choices: ['correct', 'incorrect', 'nit'],
  },
  { name: 'hasCorrections', label: 'With corrections', kind: 'bool' },
  { name: 'reviewNoteContains', label: 'Review note contains', kind: 'text' },
  { name: 'reviewCreatedAfter', label: 'Review created after', kind: 'time', hint: TIME_HINT },
  { name: 'reviewCreatedBefore', label: 'Review created before', kind: 'time', hint: TIME_HINT },
  { name: 'reviewUpdatedAfter', label: 'Review updated after', kind: 'time', hint: TIME_HINT },
  { name: 'reviewUpdatedBefore', label: 'Review updated before', kind: 'time', hint: TIME_HINT },
  { name: 'reviewClosedAfter', label: 'Review closed after', kind: 'time', hint: TIME_HINT },
  { name: 'reviewClosedBefore', label: 'Review closed before', kind: 'time', hint: TIME_HINT },
  { name: 'sinceLastClosed', label: 'Since the last closed review', kind: 'bool' },
  { name: 'sampleRate', label: 'Sample rate', kind: 'number', hint: '0–1: a fixed sample of runs' },
  { name: 'sort', label: 'Sort by', kind: 'choice', choices: ['created_at', 'completed_at'] },
  { name: 'order', label: 'Order', kind: 'choice', choices: ['desc', 'asc'] },
];

export const PAGE_SIZES = [25, 50, 100, 200];
export const DEFAULT_PAGE_SIZE = 50;

/** The filters present in a hash query (unknown names are dropped). */
export function filtersFrom(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of RUN_FILTERS) {
    const v = query.get(f.name);
    if (v !== null && v !== '') out[f.name] = v;
  }
  return out;
}

/** The query string of one page of GET /runs: the filters, the page size and the cursor. */
export function runsQuery(filters: Record<string, string>, limit: number, cursor: string | null): string {
  const q = new URLSearchParams();
  for (const f of RUN_FILTERS) {
    const v = filters[f.name]?.trim();
    if (v) q.set(f.name, v);
  }
  q.set('limit', String(limit));
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}
