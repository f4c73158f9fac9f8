// Experiments: the list, starting one (from selected examples or the whole dataset) with live
// progress read from the NDJSON stream, and one experiment's scores per example and evaluator,
// cancel, and CSV/JSON export. An experiment opened while it runs is polled.

import { EmptyRow } from '../ui/empty.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, request } from '../api.js';
import { download } from './files.js';
import { readNdjson } from './ndjson.js';
import {
  AutomationHeader,
  AutomationLine,
  Failure,
  Field,
  Show,
  Status,
  enc,
  fmtScore,
  When,
  href,
  useAction,
  useLoad,
  usePoll,
  TableHead,
} from './ui.js';
import { automationUrl, experimentUrl } from './urls.js';
import type { AutomationsExperimentsListResponse, EvalResult, ExperimentDetail } from './wire.js';

const PAGE = 50;

export function ExperimentList({ id, query }: { id: string; query: URLSearchParams }) {
  const offset = Number(query.get('offset') ?? '0') || 0;
  const list = useLoad(
    (signal) =>
      api<AutomationsExperimentsListResponse>(
        automationUrl(id, `/experiments?limit=${PAGE}&offset=${offset}`),
        {
          signal,
        },
      ),
    [id, offset],
  );
  const running = list.data?.data.some((e) => e.status !== 'completed') ?? false;
  usePoll(
    async () => list.setData(await api(automationUrl(id, `/experiments?limit=${PAGE}&offset=${offset}`))),
    2000,
    running,
  );
  const action = useAction();
  return (
    <div>
      <AutomationHeader id={id} title="Experiments" current="/experiments" />
      <div class="sa-row">
        <a class="sa-button" href={href(`/automations/${enc(id)}/experiments/new`)}>
          New experiment
        </a>
        <a class="sa-button" href={href(`/automations/${enc(id)}/experiments/compare`)}>
          Compare two experiments
        </a>
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            void action.run(() =>
              download(automationUrl(id, '/experiments/export?format=csv'), `${id}-results.csv`, 'text/csv'),
            )
          }
        >
          Export all results (CSV)
        </button>
      </div>
      <Failure error={action.error} />
      <Show loaded={list} what="experiments">
        {(page) => (
          <div class="sa-scroll">
            <table class="sa-table">
              <caption class="sa-muted">{page.total} experiments</caption>
              <TableHead
                cols={['Experiment', 'Status', 'Progress', 'Passed', 'Average score', 'Version', 'Created']}
              />
              <tbody>
                {page.data.length === 0 ? (
                  <EmptyRow cols={7}>
                    No experiments yet. Open the Dataset and press{' '}
                    <strong>Start an experiment on the whole dataset</strong> (or select examples first).
                  </EmptyRow>
                ) : null}
                {page.data.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <a href={href(`/automations/${enc(id)}/experiments/${enc(e.id)}`)}>
                        <code>{e.id}</code>
                      </a>
                    </td>
                    <td>
                      <Status status={e.status} />
                    </td>
                    <td>
                      {e.completedCount} / {e.runCount}
                    </td>
                    <td>
                      {e.passedCount} passed, {e.failedCount} failed
                    </td>
                    <td>{fmtScore(e.avgScore)}</td>
                    <td>{e.version ?? 'latest'}</td>
                    <td>
                      <When at={e.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Show>
    </div>
  );
}

interface StreamLine {
  type: string;
  experimentId: string;
  runId: string;
  exampleId: string | null;
  exampleName: string | null;
  status: string;
  score: number | null;
  passed: boolean;
  completedCount: number;
  total: number;
}

export function NewExperiment({ id, query }: { id: string; query: URLSearchParams }) {
  const examples = (query.get('examples') ?? '').split(',').filter(Boolean);
  const [concurrency, setConcurrency] = useState('');
  const [sourceRef, setSourceRef] = useState('');
  const [lines, setLines] = useState<StreamLine[]>([]);
  const [phase, setPhase] = useState<'idle' | 'running' | 'done'>('idle');
  const [experimentId, setExperimentId] = useState<string | null>(null);
  const action = useAction();
  const stop = useRef<AbortController | null>(null);
  useEffect(() => () => stop.current?.abort(), []);

  const start = () =>
    action.run(async () => {
      setLines([]);
      setExperimentId(null);
      setPhase('running');
      stop.current = new AbortController();
      const body: Record<string, unknown> = {};
      if (examples.length > 0) body.examples = examples;
      if (concurrency) body.batchConcurrency = Number(concurrency);
      if (sourceRef) body.sourceRef = sourceRef;
      try {
        const response = await request(automationUrl(id, '/experiments/stream'), {
          method: 'POST',
          body,
          signal: stop.current.signal,
        });
        if (!response.body) throw new Error('The browser gave no stream body.');
        await readNdjson(
          response.body,
          (value) => {
            const line = value as StreamLine;
            setExperimentId(line.experimentId);
            setLines((l) => [...l, line]);
          },
          stop.current.signal,
        );
      } finally {
        setPhase('done');
      }
    });
  const last = lines[lines.length - 1];
  return (
    <div>
      <AutomationHeader id={id} title="New experiment" current="/experiments" />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <p>
          {examples.length > 0
            ? `${examples.length} selected examples: ${examples.join(', ')}`
            : 'Every example of the dataset, in dataset order.'}{' '}
          <a href={href(`/automations/${enc(id)}/dataset`)}>Choose examples in the dataset</a>
        </p>
        <Field label="Concurrent runs (optional)" hint="1–256; default: the server's setting">
          <input
            type="number"
            min="1"
            max="256"
            value={concurrency}
            onInput={(e) => setConcurrency(e.currentTarget.value)}
          />
        </Field>
        <Field label="Version (optional)" hint="a release version or git ref; empty = latest">
          <input value={sourceRef} onInput={(e) => setSourceRef(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={phase === 'running'}>
          Start experiment
        </button>
      </form>
      <Failure error={action.error} title="The experiment did not start" />
      {phase !== 'idle' ? (
        <section aria-labelledby="progress" class="sa-block">
          <h2 id="progress">Progress</h2>
          <p role="status" data-testid="experiment-progress">
            {last
              ? `${last.completedCount} of ${last.total} runs finished`
              : 'Waiting for the first run to finish…'}
            {phase === 'done' && last ? ' — experiment finished.' : ''}
          </p>
          <progress max={last?.total ?? 1} value={last?.completedCount ?? 0} aria-label="Runs finished" />
          {experimentId ? (
            <div class="sa-row">
              <a href={href(`/automations/${enc(id)}/experiments/${enc(experimentId)}`)}>
                Open experiment {experimentId}
              </a>
              {phase === 'running' ? (
                <CancelButton id={id} experimentId={experimentId} onDone={() => stop.current?.abort()} />
              ) : null}
            </div>
          ) : null}
          <div class="sa-scroll">
            <table class="sa-table">
              <TableHead cols={['Example', 'Run', 'Status', 'Score', 'Passed']} />
              <tbody>
                {lines.map((l) => (
                  <tr key={l.runId}>
                    <td>{l.exampleName ?? l.exampleId ?? '—'}</td>
                    <td>
                      <a href={href(`/runs/${enc(l.runId)}`)}>
                        <code>{l.runId}</code>
                      </a>
                    </td>
                    <td>
                      <Status status={l.status} />
                    </td>
                    <td>{fmtScore(l.score)}</td>
                    <td>{l.passed ? 'yes' : 'no'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
    </div>
  );
}

function CancelButton({
  id,
  experimentId,
  onDone,
}: {
  id: string;
  experimentId: string;
  onDone?: () => void;
}) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            await api(experimentUrl(id, experimentId, '/cancel'), { method: 'POST' });
            onDone?.();
          })
        }
      >
        {action.busy ? 'Cancelling…' : 'Cancel experiment'}
      </button>
      <Failure error={action.error} title="Cancel failed" />
    </>
  );
}

export function ExperimentView({ id, experimentId }: { id: string; experimentId: string }) {
  const detail = useLoad(
    (signal) => api<ExperimentDetail>(experimentUrl(id, experimentId), { signal }),
    [id, experimentId],
  );
  usePoll(
    async () => detail.setData(await api<ExperimentDetail>(experimentUrl(id, experimentId))),
    1000,
    detail.data !== undefined && detail.data.status !== 'completed',
  );
  const action = useAction();
  return (
    <div>
      <p>
        <a href={href(`/automations/${enc(id)}/experiments`)}>← Experiments</a>
      </p>
      <AutomationLine id={id} />
      <Show loaded={detail} what="the experiment">
        {(x) => (
          <>
            <h1>
              Experiment <code>{x.id}</code>
            </h1>
            <dl class="sa-facts">
              <dt>Status</dt>
              <dd data-testid="experiment-status">
                <Status status={x.status} />
              </dd>
              <dt>Runs finished</dt>
              <dd>
                {x.completedCount} of {x.runCount}
              </dd>
              <dt>Passed / failed</dt>
              <dd>
                {x.passedCount} / {x.failedCount}
              </dd>
              <dt>Average score</dt>
              <dd data-testid="experiment-avg">{fmtScore(x.avgScore)}</dd>
              <dt>Version</dt>
              <dd>{x.version ?? 'latest'}</dd>
              <dt>Created</dt>
              <dd>
                <When at={x.createdAt} />
              </dd>
              <dt>Completed</dt>
              <dd>
                <When at={x.completedAt} />
              </dd>
            </dl>
            <progress max={x.runCount || 1} value={x.completedCount} aria-label="Runs finished" />
            <div class="sa-row">
              {x.status !== 'completed' ? (
                <CancelButton id={id} experimentId={x.id} onDone={detail.reload} />
              ) : null}
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(() =>
                    download(experimentUrl(id, x.id, '/export?format=csv'), `${x.id}.csv`, 'text/csv'),
                  )
                }
              >
                Export CSV
              </button>
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(() =>
                    download(
                      experimentUrl(id, x.id, '/export?format=json'),
                      `${x.id}.json`,
                      'application/json',
                    ),
                  )
                }
              >
                Export JSON
              </button>
              <a href={href('/runs', { batchId: x.id })}>Its runs in the run list</a>
            </div>
            <Failure error={action.error} title="Export failed" />
            <h2>Scores per example and evaluator</h2>
            <ScoresTable detail={x} />
          </>
        )}
      </Show>
    </div>
  );
}

/** One row per run (its example), one column per evaluator, the weighted result at the end. */
export function ScoresTable({ detail }: { detail: ExperimentDetail }) {
  const evaluators: string[] = [];
  for (const results of Object.values(detail.resultsByRun)) {
    for (const r of results) if (!evaluators.includes(r.evaluatorName)) evaluators.push(r.evaluatorName);
  }
  const cell = (r: EvalResult | undefined) => {
    if (!r) return <span class="sa-muted">—</span>;
    if (r.error)
      return (
        <span class="sa-invalid" title={r.error}>
          error
        </span>
      );
    return (
      <span class={r.passed ? 'sa-ok' : 'sa-invalid'} title={r.label ?? undefined}>
        {fmtScore(r.score)} {r.passed === null ? '' : r.passed ? '✓' : '✗'}
        <span class="sa-sr">{r.passed ? ' passed' : ' failed'}</span>
      </span>
    );
  };
  return (
    <div class="sa-scroll">
      <table class="sa-table" data-testid="scores-table">
        <TableHead cols={['Example', 'Run', 'Status', ...evaluators]} />
        <tbody>
          {detail.runs.map((run) => {
            const results = detail.resultsByRun[run.id] ?? [];
            return (
              <tr key={run.id}>
                <th scope="row">{run.exampleName ?? run.exampleId ?? '—'}</th>
                <td>
                  <a href={href(`/runs/${enc(run.id)}`)}>
                    <code>{run.id}</code>
                  </a>
                </td>
                <td>
                  <Status status={run.status} />
                </td>
                {evaluators.map((e) => (
                  <td key={e}>{cell(results.find((r) => r.evaluatorName === e))}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
      {detail.runs.length < detail.runCount ? (
        <p class="sa-muted">
          {detail.runCount - detail.runs.length} examples have not started (or were cancelled before they
          did).
        </p>
      ) : null}
    </div>
  );
}
