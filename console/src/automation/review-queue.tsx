// The review queue of one automation: the oldest finished run nobody has reviewed yet (GET /runs
// with noReview, optionally thinned by the run list's sampleRate, which keeps runs whose
// sampleRank is below it), shown with its input and output, and a verdict in one key: A approves
// (verdict correct), R rejects (verdict incorrect), S skips to the next run for this visit. The
// verdict is PUT /runs/{id}/reviews; the server then leaves the run out of noReview, so the next
// read of the queue gives the next run. Experiment runs are left out: they are scored by
// evaluators. Keys typed into the note field are text, not verdicts.

import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Empty } from '../ui/empty.js';
import { apiUrl, runUrl } from './urls.js';
import {
  AutomationHeader,
  Failure,
  Field,
  JsonView,
  Loading,
  Show,
  When,
  enc,
  href,
  navigate,
  useAction,
  useLoad,
} from './ui.js';
import { queueQuery } from './run-shapes.js';
import type { Run, RunsListResponse } from './wire.js';

export const SAMPLE_RATES = ['1', '0.5', '0.25', '0.1', '0.05', '0.01'];

/** Pages of the queue read before it says there is nothing left (a hang guard for huge skips). */
const MAX_PAGES = 40;

type Verdict = 'correct' | 'incorrect';

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

/** The verdict buttons and the key that gives each (the listener and the buttons read this). */
const VERDICT_KEYS: readonly { key: string; verdict: Verdict | 'skipped'; label: string }[] = [
  { key: 'A', verdict: 'correct', label: 'Approve' },
  { key: 'R', verdict: 'incorrect', label: 'Reject' },
  { key: 'S', verdict: 'skipped', label: 'Skip' },
];

export function ReviewQueue({ id, query }: { id: string; query: URLSearchParams }) {
  const sample = SAMPLE_RATES.includes(query.get('sample') ?? '') ? query.get('sample')! : '1';
  // Runs skipped or reviewed during this visit; the next read passes over them.
  const [passed, setPassed] = useState<string[]>([]);
  const [log, setLog] = useState<{ id: string; verdict: Verdict | 'skipped' }[]>([]);
  const [note, setNote] = useState('');
  const next = useLoad(
    async (signal) => {
      let cursor: string | null = null;
      for (let i = 0; i < MAX_PAGES; i++) {
        const page: RunsListResponse = await api<RunsListResponse>(
          apiUrl(`/runs?${queueQuery(id, sample, cursor)}`),
          { signal },
        );
        const hit = page.runs.find((r) => !passed.includes(r.id));
        if (hit) return await api<Run>(runUrl(hit.id, '?expand=input'), { signal });
        if (!page.nextCursor) return null;
        cursor = page.nextCursor;
      }
      return null;
    },
    [id, sample, passed.length],
  );
  const action = useAction();
  const current = next.loading ? undefined : (next.data ?? undefined);

  const pass = (runId: string, verdict: Verdict | 'skipped') => {
    setLog((l) => [{ id: runId, verdict }, ...l]);
    setPassed((p) => [...p, runId]);
    setNote('');
  };
  const decide = (verdict: Verdict | 'skipped') => {
    const run = current;
    if (!run || action.busy) return;
    if (verdict === 'skipped') {
      pass(run.id, verdict);
      return;
    }
    void action.run(async () => {
      const body: Record<string, unknown> = { verdict };
      if (note.trim() !== '') body.note = note.trim();
      await api(runUrl(run.id, '/reviews'), { method: 'PUT', body });
      pass(run.id, verdict);
    });
  };
  // The listener is added once; it calls the latest decide through the ref.
  const decideRef = useRef(decide);
  decideRef.current = decide;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || typing(e.target)) return;
      const verdict = VERDICT_KEYS.find((v) => v.key.toLowerCase() === e.key.toLowerCase())?.verdict;
      if (!verdict) return;
      e.preventDefault();
      decideRef.current(verdict);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const reviewed = log.filter((l) => l.verdict !== 'skipped').length;
  return (
    <div>
      <AutomationHeader id={id} title="Review queue" current="/review" />
      <div class="sa-row">
        <Field label="Sample rate" hint="review this share of the runs (by each run’s sample rank)">
          <select
            value={sample}
            onChange={(e) => navigate(`/automations/${enc(id)}/review`, { sample: e.currentTarget.value })}
          >
            {SAMPLE_RATES.map((r) => (
              <option key={r} value={r}>
                {r === '1' ? 'every run' : `${Number(r) * 100} %`}
              </option>
            ))}
          </select>
        </Field>
        <p class="sa-muted" aria-live="polite" data-testid="queue-count">
          Reviewed in this visit: {reviewed}; skipped: {log.length - reviewed}
        </p>
      </div>
      <p class="sa-muted" id="queue-keys">
        Keys: <kbd>A</kbd> approve (correct), <kbd>R</kbd> reject (incorrect), <kbd>S</kbd> skip. For
        corrections and files, open the run’s Review tab.
      </p>
      <Failure error={action.error} title="The verdict was not saved" />
      <Show loaded={next} what="the next run to review">
        {(run) =>
          next.loading ? (
            <Loading what="the next run to review" />
          ) : run === null ? (
            <Empty>
              No runs left to review{sample !== '1' ? ' in this sample' : ''}. New runs of this automation
              appear here once they finish; start one from the{' '}
              <a href={href(`/automations/${enc(id)}`)}>automation’s page</a>.
            </Empty>
          ) : (
            <section aria-labelledby="queue-run" data-testid="queue-run" data-run-id={run.id}>
              <h2 id="queue-run">
                Run <a href={href(`/runs/${enc(run.id)}`, { tab: 'review' })}>{run.id}</a>
              </h2>
              <p class="sa-muted">
                {run.execution.status}, created <When at={run.timing.createdAt} />
              </p>
              <div class="sa-columns">
                <section aria-label="Input">
                  <h3>Input</h3>
                  <JsonView value={run.input?.args ?? null} label="Run input" />
                </section>
                <section aria-label="Output">
                  <h3>Output</h3>
                  {run.error ? <p class="sa-invalid">Error: {run.error}</p> : null}
                  <JsonView value={run.output ?? null} label="Run output" />
                </section>
              </div>
              <Field label="Note (optional)">
                <textarea rows={2} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
              </Field>
              <div class="sa-row" role="group" aria-label="Verdict" aria-describedby="queue-keys">
                {VERDICT_KEYS.map((v) => (
                  <button
                    key={v.key}
                    type="button"
                    aria-keyshortcuts={v.key}
                    disabled={action.busy}
                    onClick={() => decide(v.verdict)}
                  >
                    {v.label} ({v.key})
                  </button>
                ))}
              </div>
            </section>
          )
        }
      </Show>
      {log.length > 0 ? (
        <section aria-labelledby="queue-log">
          <h2 id="queue-log">This visit</h2>
          <ol class="sa-steps" data-testid="queue-log">
            {log.map((l) => (
              <li key={l.id}>
                <a href={href(`/runs/${enc(l.id)}`)}>
                  <code>{l.id}</code>
                </a>{' '}
                {l.verdict === 'skipped' ? 'skipped' : l.verdict === 'correct' ? 'approved' : 'rejected'}
              </li>
            ))}
          </ol>
        </section>
      ) : null}
    </div>
  );
}
