// One run: input and output, files and artifacts (preview and download), steps, events, trace,
// usage, scores, and the review editor. The run is polled while it is in flight. The steps tab
// draws the steps as a waterfall: one bar per step on the run's time axis (run-shapes.ts).

import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { runUrl } from './urls.js';
import { FilePreview, download } from './files.js';
import { ReviewEditor } from './review.js';
import { waterfall, type StepLike } from './run-shapes.js';
import {
  Failure,
  JsonView,
  Show,
  Status,
  TabPanel,
  Tabs,
  enc,
  encPath,
  fmtMs,
  fmtScore,
  Clock,
  When,
  href,
  navigate,
  useAction,
  useLoad,
  usePoll,
  TableHead,
} from './ui.js';
import type {
  Run,
  RunArtifact,
  RunArtifactsResponse,
  RunEventsResponse,
  RunScoresResponse,
  RunStartResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsageResponse,
} from './wire.js';

const TABS = [
  { id: 'io', label: 'Input & output' },
  { id: 'files', label: 'Files' },
  { id: 'steps', label: 'Steps' },
  { id: 'events', label: 'Events' },
  { id: 'trace', label: 'Trace' },
  { id: 'usage', label: 'Usage' },
  { id: 'scores', label: 'Scores' },
  { id: 'review', label: 'Review' },
];

export function RunDetail({ id, query }: { id: string; query: URLSearchParams }) {
  const tab = TABS.some((t) => t.id === query.get('tab')) ? query.get('tab')! : 'io';
  const run = useLoad(
    (signal) => api<Run>(runUrl(id, '?expand=input,usage,execution,debug'), { signal }),
    [id],
  );
  // Poll quietly (no loading state) until the run ends.
  usePoll(
    async () => {
      const next = await api<Run>(runUrl(id, '?expand=input,usage,execution,debug'));
      run.setData(next);
    },
    1000,
    run.data !== undefined && !run.data.finished,
  );
  const action = useAction();
  return (
    <div>
      <p>
        <a href={href('/runs')}>← Runs</a>
      </p>
      <Show loaded={run} what="the run">
        {(r) => (
          <>
            <h1>
              Run <code>{r.id}</code>
            </h1>
            <dl class="sa-facts" aria-label="Run summary">
              <dt>Status</dt>
              <dd data-testid="run-status">
                <Status status={r.execution.status} />
              </dd>
              <dt>Automation</dt>
              <dd>
                <a href={href(`/automations/${enc(r.source.id)}`)}>
                  {r.source.name ?? r.source.slug ?? r.source.id}
                </a>
                {r.source.version ? ` ${r.source.version}` : ''}
              </dd>
              <dt>Created</dt>
              <dd>
                <When at={r.timing.createdAt} />
              </dd>
              <dt>Duration</dt>
              <dd>{fmtMs(r.timing.durationMs)}</dd>
              <dt>Trigger</dt>
              <dd>
                {r.trigger.type ?? '—'}
                {r.trigger.by ? ` by ${r.trigger.by.id}` : ''}
              </dd>
              {r.execution.batchId ? (
                <>
                  <dt>Batch</dt>
                  <dd>
                    <a href={href('/runs', { batchId: r.execution.batchId })}>{r.execution.batchId}</a>
                  </dd>
                </>
              ) : null}
              <dt>Output schema</dt>
              <dd>
                {r.execution.schemaValid === null ? '—' : r.execution.schemaValid ? 'valid' : 'not valid'}
              </dd>
              {r.execution.retry.previousRunId ? (
                <>
                  <dt>Rerun of</dt>
                  <dd>
                    <a href={href(`/runs/${enc(r.execution.retry.previousRunId)}`)}>
                      {r.execution.retry.previousRunId}
                    </a>
                  </dd>
                </>
              ) : null}
              {r.execution.retry.nextRun ? (
                <>
                  <dt>Rerun</dt>
                  <dd>
                    <a href={href(`/runs/${enc(r.execution.retry.nextRun.id)}`)}>
                      {r.execution.retry.nextRun.id}
                    </a>
                  </dd>
                </>
              ) : null}
            </dl>
            {r.error ? (
              <p class="sa-invalid" role="status">
                Error: {r.error}
              </p>
            ) : null}
            <div class="sa-row">
              {!r.finished ? (
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => void (await api(runUrl(r.id, '/cancel'), { method: 'POST' })))
                  }
                >
                  Cancel run
                </button>
              ) : (
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      const next = await api<RunStartResponse>(runUrl(r.id, '/rerun'), { method: 'POST' });
                      navigate(`/runs/${enc(next.id)}`);
                    })
                  }
                >
                  Rerun
                </button>
              )}
            </div>
            <Failure error={action.error} />
            <Tabs
              label="Run details"
              tabs={TABS}
              current={tab}
              onSelect={(t) => navigate(`/runs/${enc(id)}`, { tab: t === 'io' ? undefined : t })}
            />
            <TabPanel id={tab}>
              {tab === 'io' ? <InputOutput run={r} /> : null}
              {tab === 'files' ? <Files run={r} /> : null}
              {tab === 'steps' ? <Steps run={r} /> : null}
              {tab === 'events' ? <Events id={r.id} finished={r.finished} /> : null}
              {tab === 'trace' ? <Trace id={r.id} run={r} /> : null}
              {tab === 'usage' ? <Usage id={r.id} finished={r.finished} /> : null}
              {tab === 'scores' ? <Scores id={r.id} /> : null}
              {tab === 'review' ? <ReviewEditor run={r} /> : null}
            </TabPanel>
          </>
        )}
      </Show>
    </div>
  );
}

function InputOutput({ run }: { run: Run }) {
  return (
    <div class="sa-columns">
      <section aria-labelledby="run-input">
        <h2 id="run-input">Input</h2>
        <JsonView value={run.input?.args ?? null} label="Run input" />
        {run.input?.metadata ? (
          <>
            <h3>Metadata</h3>
            <JsonView value={run.input.metadata} label="Run metadata" />
          </>
        ) : null}
      </section>
      <section aria-labelledby="run-output">
        <h2 id="run-output">Output</h2>
        {run.finished ? (
          <div data-testid="run-output">
            <JsonView value={run.output ?? null} label="Run output" />
          </div>
        ) : (
          <p class="sa-muted">The run has not finished yet.</p>
        )}
      </section>
    </div>
  );
}

function Files({ run }: { run: Run }) {
  const list = useLoad(
    (signal) => api<RunArtifactsResponse>(runUrl(run.id, '/artifacts'), { signal }),
    [run.id, run.finished],
  );
  const [open, setOpen] = useState<string | null>(null);
  const action = useAction();
  const artifactUrl = (a: RunArtifact) => runUrl(run.id, `/artifacts/${encPath(a.path)}`);
  return (
    <Show loaded={list} what="files">
      {({ artifacts }) =>
        artifacts.length === 0 ? (
          <p class="sa-muted">This run has no files.</p>
        ) : (
          <>
            <div class="sa-row">
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(() =>
                    download(runUrl(run.id, '/artifacts?zip=1'), `${run.id}-output.zip`, 'application/zip'),
                  )
                }
              >
                Download output files (ZIP)
              </button>
            </div>
            <Failure error={action.error} title="Download failed" />
            <div class="sa-scroll">
              <table class="sa-table">
                <TableHead cols={['Path', 'Role', 'Step', 'Type', 'Size', 'Actions']} />
                <tbody>
                  {artifacts.map((a) => (
                    <tr key={a.path}>
                      <td>
                        <code>{a.path}</code>
                      </td>
                      <td>{a.role}</td>
                      <td>{a.stepName ?? '—'}</td>
                      <td>{a.contentType ?? '—'}</td>
                      <td>{a.size ?? '—'}</td>
                      <td class="sa-actions">
                        <button
                          type="button"
                          aria-expanded={open === a.path}
                          onClick={() => setOpen(open === a.path ? null : a.path)}
                        >
                          {open === a.path ? 'Hide' : 'Preview'}
                          <span class="sa-sr"> {a.path}</span>
                        </button>
                        <button
                          type="button"
                          onClick={() =>
                            void action.run(() => download(artifactUrl(a), a.name, a.contentType))
                          }
                        >
                          Download<span class="sa-sr"> {a.path}</span>
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {open
              ? artifacts
                  .filter((a) => a.path === open)
                  .map((a) => (
                    <section key={a.path} aria-label={`Preview of ${a.path}`} class="sa-preview">
                      <h3>{a.path}</h3>
                      <FilePreview url={artifactUrl(a)} name={a.name} type={a.contentType ?? null} />
                    </section>
                  ))
              : null}
          </>
        )
      }
    </Show>
  );
}

interface StepRow {
  name?: string;
  index?: number;
  status?: string;
  startedAt?: string | null;
  completedAt?: string | null;
  durationMs?: number | null;
  output?: unknown;
  error?: unknown;
  [k: string]: unknown;
}

function Steps({ run }: { run: Run }) {
  const steps = useLoad(
    (signal) => api<RunStepsResponse>(runUrl(run.id, '/steps'), { signal }),
    [run.id, run.finished],
  );
  return (
    <Show loaded={steps} what="steps">
      {(s) =>
        s.steps.length === 0 ? (
          <p class="sa-muted">No steps recorded.</p>
        ) : (
          <>
            <Waterfall steps={s.steps as StepLike[]} run={run} />
            <h2>Step records</h2>
            <ol class="sa-steps">
              {(s.steps as StepRow[]).map((step, i) => (
                <li key={i}>
                  <details>
                    <summary>
                      <strong>{step.name ?? `step ${i}`}</strong>{' '}
                      <Status status={String(step.status ?? 'unknown')} />{' '}
                      <span class="sa-muted">{fmtMs(step.durationMs ?? null)}</span>
                    </summary>
                    <JsonView value={step} label={`Step ${step.name ?? i}`} />
                  </details>
                </li>
              ))}
            </ol>
          </>
        )
      }
    </Show>
  );
}

/** Width of the bars' drawing in SVG user units (the SVG itself stretches to its cell). */
const AXIS_UNITS = 1000;

/**
 * The steps as bars on the run's time axis: a table (step, start from the run's start, duration)
 * whose last column draws the bar, so the numbers are read by screen readers and the shape seen.
 * Bars are SVG attributes, not inline styles, which the console's CSP (style-src 'self') refuses.
 */
function Waterfall({ steps, run }: { steps: StepLike[]; run: Run }) {
  const w = waterfall(steps, run.timing.startedAt, run.timing.completedAt);
  return (
    <section aria-labelledby="waterfall-title">
      <h2 id="waterfall-title">Waterfall</h2>
      <div class="sa-scroll">
        <table class="sa-table sa-waterfall" data-testid="waterfall" data-total-ms={w.totalMs}>
          <TableHead
            cols={[
              'Step',
              'Status',
              'Start',
              'Duration',
              <span key="axis" class="sa-axis">
                <span>
                  <span class="sa-sr">Timeline from </span>0
                </span>
                <span>
                  <span class="sa-sr">to </span>
                  {fmtMs(w.totalMs)}
                </span>
              </span>,
            ]}
          />
          <tbody>
            {w.bars.map((b, i) => (
              <tr key={i}>
                <th scope="row">{b.name}</th>
                <td>
                  <Status status={b.status} />
                </td>
                <td data-cell="offset">+{fmtMs(b.offsetMs)}</td>
                <td data-cell="duration">{fmtMs(b.durationMs)}</td>
                <td class="sa-bar-cell">
                  <svg
                    class="sa-bars"
                    viewBox={`0 0 ${AXIS_UNITS} 10`}
                    preserveAspectRatio="none"
                    aria-hidden="true"
                    focusable="false"
                  >
                    <rect
                      class={`sa-bar sa-bar-${b.status === 'failed' ? 'failed' : 'ok'}`}
                      x={b.x * AXIS_UNITS}
                      y="1"
                      width={Math.max(b.width * AXIS_UNITS, 2)}
                      height="8"
                      data-offset-ms={b.offsetMs}
                      data-duration-ms={b.durationMs}
                    />
                  </svg>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {w.undated.length > 0 ? (
        <p class="sa-muted">Without a start time (not drawn): {w.undated.join(', ')}.</p>
      ) : null}
    </section>
  );
}

function Events({ id, finished }: { id: string; finished: boolean }) {
  const events = useLoad(
    (signal) => api<RunEventsResponse>(runUrl(id, '/events'), { signal }),
    [id, finished],
  );
  return (
    <Show loaded={events} what="events">
      {(e) => (
        <div class="sa-scroll">
          <table class="sa-table">
            <TableHead cols={['Time', 'Event', 'Status', 'Message', 'Metadata']} />
            <tbody>
              {e.events.map((ev, i) => (
                <tr key={i}>
                  <td>
                    <Clock at={ev.timestamp} />
                  </td>
                  <td>
                    <code>{ev.type}</code>
                  </td>
                  <td>{ev.status ?? ''}</td>
                  <td>{ev.message ?? ''}</td>
                  <td>
                    {ev.metadata && Object.keys(ev.metadata).length > 0 ? (
                      <JsonView value={ev.metadata} />
                    ) : (
                      ''
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Show>
  );
}

function Trace({ id, run }: { id: string; run: Run }) {
  const trace = useLoad(
    (signal) => api<RunTraceResponse>(runUrl(id, '/trace'), { signal }),
    [id, run.finished],
  );
  return (
    <>
      {run.debug ? (
        <details>
          <summary>Debug (trace id, commit, failure)</summary>
          <JsonView value={run.debug} label="Debug" />
        </details>
      ) : null}
      <Show loaded={trace} what="the trace">
        {(t) =>
          t.events.length === 0 ? (
            <p class="sa-muted">No trace records.</p>
          ) : (
            <ol class="sa-steps" aria-label="Trace">
              {t.events.map((ev, i) => (
                <li key={i}>
                  <details>
                    <summary>
                      <code>{ev.type ?? ev.phase ?? 'record'}</code> {ev.stepName ?? ''}{' '}
                      {ev.status ? <Status status={ev.status} /> : null}{' '}
                      <span class="sa-muted">
                        <Clock at={ev.startedAt ?? null} />
                      </span>
                    </summary>
                    <JsonView value={ev} />
                  </details>
                </li>
              ))}
            </ol>
          )
        }
      </Show>
    </>
  );
}

function Usage({ id, finished }: { id: string; finished: boolean }) {
  const usage = useLoad((signal) => api<RunUsageResponse>(runUrl(id, '/usage'), { signal }), [id, finished]);
  return (
    <Show loaded={usage} what="usage">
      {({ usage: u }) =>
        u === null ? (
          <p class="sa-muted">No usage recorded for this run.</p>
        ) : (
          <dl class="sa-facts" aria-label="Usage">
            <dt>Input tokens</dt>
            <dd>{u.tokens.input ?? '—'}</dd>
            <dt>Output tokens</dt>
            <dd>{u.tokens.output ?? '—'}</dd>
            <dt>Cache read / write tokens</dt>
            <dd>
              {u.tokens.cacheRead ?? '—'} / {u.tokens.cacheWrite ?? '—'}
            </dd>
            <dt>Credits charged</dt>
            <dd>{u.creditsCharged ?? '—'}</dd>
            <dt>Duration</dt>
            <dd>{fmtMs(u.durationMs)}</dd>
            <dt>LLM calls</dt>
            <dd>{u.llmCallCount ?? '—'}</dd>
            <dt>Agent turns</dt>
            <dd>{u.agentTurns ?? '—'}</dd>
            <dt>OCR pages</dt>
            <dd>{u.ocrPagesProcessed ?? '—'}</dd>
          </dl>
        )
      }
    </Show>
  );
}

function Scores({ id }: { id: string }) {
  const scores = useLoad((signal) => api<RunScoresResponse>(runUrl(id, '/scores'), { signal }), [id]);
  return (
    <Show loaded={scores} what="scores">
      {(s) =>
        s.scores.length === 0 ? (
          <p class="sa-muted">No evaluator scores for this run.</p>
        ) : (
          <div class="sa-scroll">
            <table class="sa-table">
              <TableHead cols={['Evaluator', 'Type', 'Score', 'Passed', 'Label', 'Error']} />
              <tbody>
                {s.scores.map((e) => (
                  <tr key={e.id}>
                    <td>{e.evaluatorName}</td>
                    <td>{e.evaluatorType}</td>
                    <td>{fmtScore(e.score)}</td>
                    <td>{e.passed === null ? '—' : e.passed ? 'yes' : 'no'}</td>
                    <td>{e.label ?? ''}</td>
                    <td>{e.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Show>
  );
}
