// The run list: every filter of GET /runs, one page at a time with the server's cursor (the page
// never holds more than one page of runs, whatever the tenant has stored), back through the
// cursors already seen. Performance marks around each page let the bench measure render time.
// The list item of GET /runs carries no input, output or usage, so after a page is shown each row's
// run is read (GET /runs/{id}?expand=input,usage, a few at a time) to fill the preview and usage
// columns; the rows are usable before that.

import { EmptyRow } from '../ui/empty.js';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { serviceUrl } from '../services.js';
import {
  DEFAULT_PAGE_SIZE,
  PAGE_SIZES,
  RUN_FILTERS,
  filtersFrom,
  runsQuery,
  type FilterSpec,
} from './run-filters.js';
import {
  Failure,
  Field,
  Loading,
  Status,
  TableHead,
  enc,
  fmtMs,
  When,
  href,
  navigate,
  useLoad,
} from './ui.js';
import { previewJson, totalTokens } from './run-shapes.js';
import { runUrl } from './urls.js';
import type { Run, RunListItem, RunsListResponse } from './wire.js';

/** Performance API names the bench reads (bench/console-runs.ts). */
export const RUNS_MARK_START = 'sluice:runs-page-start';
export const RUNS_MARK_DATA = 'sluice:runs-page-data';
export const RUNS_MEASURE_RENDER = 'sluice:runs-page-render';
export const RUNS_MEASURE_TOTAL = 'sluice:runs-page-total';

export function RunList({ query }: { query: URLSearchParams }) {
  const filters = filtersFrom(query);
  const limit = Number(query.get('limit')) || DEFAULT_PAGE_SIZE;
  const filterKey = runsQuery(filters, limit, null);
  // Cursors of the pages before the current one; the first page has none.
  const [trail, setTrail] = useState<{ key: string; cursors: (string | null)[] }>({
    key: filterKey,
    cursors: [null],
  });
  const cursors = trail.key === filterKey ? trail.cursors : [null];
  const cursor = cursors[cursors.length - 1] ?? null;

  const page = useLoad(
    async (signal) => {
      performance.clearMarks(RUNS_MARK_START);
      performance.mark(RUNS_MARK_START);
      const result = await api<RunsListResponse>(
        serviceUrl('automation', `/api/v1/runs?${runsQuery(filters, limit, cursor)}`),
        { signal },
      );
      performance.clearMarks(RUNS_MARK_DATA);
      performance.mark(RUNS_MARK_DATA);
      return result;
    },
    [filterKey, cursor],
  );

  // Runs right after Preact has written the rows into the document.
  useLayoutEffect(() => {
    if (!page.data || page.loading) return;
    performance.clearMeasures(RUNS_MEASURE_RENDER);
    performance.clearMeasures(RUNS_MEASURE_TOTAL);
    performance.measure(RUNS_MEASURE_RENDER, RUNS_MARK_DATA);
    performance.measure(RUNS_MEASURE_TOTAL, RUNS_MARK_START);
    document.body.dataset.runsPage = String(cursors.length);
  }, [page.data, page.loading]);

  const go = (next: (string | null)[]) => setTrail({ key: filterKey, cursors: next });

  return (
    <div>
      <h1>Runs</h1>
      <FilterForm key={filterKey} filters={filters} limit={limit} />
      <Failure error={page.error} title="Could not load runs" />
      {page.data === undefined && page.error === undefined ? <Loading what="runs" /> : null}
      {page.data ? (
        <>
          <RunTable runs={page.data.runs} busy={page.loading} />
          <nav class="sa-row" aria-label="Pages of runs">
            <button
              type="button"
              disabled={cursors.length <= 1 || page.loading}
              onClick={() => go(cursors.slice(0, -1))}
            >
              Previous page
            </button>
            <span class="sa-muted" aria-live="polite">
              Page {cursors.length}
              {page.data.runs.length === 0 ? ' (no runs)' : ''}
            </span>
            <button
              type="button"
              disabled={!page.data.nextCursor || page.loading}
              onClick={() => page.data?.nextCursor && go([...cursors, page.data.nextCursor])}
            >
              Next page
            </button>
          </nav>
        </>
      ) : null}
    </div>
  );
}

/** Length of the input and output previews (the run page shows them whole). */
const PREVIEW_CHARS = 40;

/** Rows' runs read this many at a time, so a page of 200 does not open 200 requests at once. */
const DETAIL_CONCURRENCY = 4;

/** Each listed run with its input, output and usage, filled in as the reads answer. */
function useRowDetails(ids: string[]): Map<string, Run | 'failed'> {
  const [details, setDetails] = useState<Map<string, Run | 'failed'>>(new Map());
  const key = ids.join(',');
  useEffect(() => {
    const controller = new AbortController();
    const queue = [...ids];
    setDetails(new Map());
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        let value: Run | 'failed';
        try {
          value = await api<Run>(runUrl(id, '?expand=input,usage'), { signal: controller.signal });
        } catch {
          if (controller.signal.aborted) return;
          value = 'failed';
        }
        const done = id;
        setDetails((m) => new Map(m).set(done, value));
      }
    };
    for (let i = 0; i < DETAIL_CONCURRENCY; i++) void worker();
    return () => controller.abort();
  }, [key]);
  return details;
}

function RunTable({ runs, busy }: { runs: RunListItem[]; busy: boolean }) {
  const details = useRowDetails(runs.map((r) => r.id));
  const cols = ['Run', 'Automation', 'Status', 'Created', 'Duration', 'Tokens', 'Credits', 'Input', 'Output'];
  return (
    <div class="sa-scroll">
      <table class="sa-table" aria-busy={busy} data-testid="runs-table">
        <TableHead cols={[...cols, 'Trigger', 'Review']} />
        <tbody>
          {runs.length === 0 ? (
            <EmptyRow cols={cols.length + 2}>
              No runs match these filters. Clear the filters, or start a run from an automation’s page (
              <strong>Start run</strong>).
            </EmptyRow>
          ) : null}
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={href(`/runs/${enc(r.id)}`)}>
                  <code>{r.id}</code>
                </a>
              </td>
              <td>
                {r.source.name ?? r.source.slug ?? r.source.id}
                {r.source.version ? <span class="sa-muted"> {r.source.version}</span> : null}
              </td>
              <td>
                <Status status={r.execution.status} />
                {r.error ? <div class="sa-small sa-invalid">{r.error}</div> : null}
              </td>
              <td>
                <When at={r.timing.createdAt} />
              </td>
              <td>{fmtMs(r.timing.durationMs)}</td>
              <DetailCells detail={details.get(r.id)} />
              <td>{r.trigger.type ?? '—'}</td>
              <td>{reviewText(r)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Input and output previews, tokens (input + output, split on hover) and credits of one row. */
function DetailCells({ detail }: { detail: Run | 'failed' | undefined }) {
  if (detail === undefined || detail === 'failed') {
    const text = detail === 'failed' ? 'not readable' : '…';
    return (
      <>
        {[0, 1, 2, 3].map((i) => (
          <td key={i} class="sa-muted" data-cell={detail === 'failed' ? 'failed' : 'pending'}>
            {text}
          </td>
        ))}
      </>
    );
  }
  const tokens = totalTokens(detail.usage);
  return (
    <>
      <td
        data-cell="tokens"
        title={
          detail.usage
            ? `input ${detail.usage.tokens.input ?? '—'}, output ${detail.usage.tokens.output ?? '—'}`
            : undefined
        }
      >
        {tokens ?? '—'}
      </td>
      <td data-cell="credits">{detail.usage?.creditsCharged ?? '—'}</td>
      <td class="sa-preview-cell" data-cell="input">
        <code>{previewJson(detail.input?.args, PREVIEW_CHARS)}</code>
      </td>
      <td class="sa-preview-cell" data-cell="output">
        <code>{detail.finished ? previewJson(detail.output, PREVIEW_CHARS) : '—'}</code>
      </td>
    </>
  );
}

function reviewText(r: RunListItem): string {
  const review = r.execution.review;
  if (!review) return '—';
  const verdict = review.verdict ?? 'nit';
  return `${verdict}, ${review.status}${review.correctionCount > 0 ? `, ${review.correctionCount} corrections` : ''}`;
}

function FilterForm({ filters, limit }: { filters: Record<string, string>; limit: number }) {
  const [draft, setDraft] = useState<Record<string, string>>(filters);
  const [size, setSize] = useState(String(limit));
  const set = (name: string, value: string) => setDraft((d) => ({ ...d, [name]: value }));
  const apply = () =>
    navigate('/runs', { ...draft, limit: size === String(DEFAULT_PAGE_SIZE) ? undefined : size });
  const more = RUN_FILTERS.filter((f) => !f.main);
  const moreSet = more.some((f) => filters[f.name]);
  return (
    <form
      class="sa-filters"
      aria-label="Run filters"
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      <div class="sa-grid">
        {RUN_FILTERS.filter((f) => f.main).map((f) => (
          <FilterInput key={f.name} spec={f} value={draft[f.name] ?? ''} onChange={(v) => set(f.name, v)} />
        ))}
        <Field label="Per page">
          <select value={size} onChange={(e) => setSize(e.currentTarget.value)}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <details open={moreSet}>
        <summary>More filters</summary>
        <div class="sa-grid">
          {more.map((f) => (
            <FilterInput key={f.name} spec={f} value={draft[f.name] ?? ''} onChange={(v) => set(f.name, v)} />
          ))}
        </div>
      </details>
      <div class="sa-row">
        <button type="submit">Apply filters</button>
        <button
          type="button"
          onClick={() => {
            setDraft({});
            navigate('/runs');
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

function FilterInput({
  spec,
  value,
  onChange,
}: {
  spec: FilterSpec;
  value: string;
  onChange: (v: string) => void;
}) {
  const hint = spec.hint ? { hint: spec.hint } : {};
  if (spec.kind === 'choice') {
    return (
      <Field label={spec.label} {...hint}>
        <select name={spec.name} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">any</option>
          {spec.choices?.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </Field>
    );
  }
  if (spec.kind === 'bool') {
    return (
      <label class="sa-check">
        <input
          type="checkbox"
          name={spec.name}
          checked={value === 'true'}
          onChange={(e) => onChange(e.currentTarget.checked ? 'true' : '')}
        />
        {spec.label}
      </label>
    );
  }
  return (
    <Field label={spec.label} {...hint}>
      {spec.kind === 'number' ? (
        <input
          name={spec.name}
          type="number"
          step="any"
          min="0"
          max="1"
          value={value}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      ) : spec.kind === 'search' ? (
        <input
          name={spec.name}
          type="search"
          value={value}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      ) : (
        <input name={spec.name} type="text" value={value} onInput={(e) => onChange(e.currentTarget.value)} />
      )}
    </Field>
  );
}
