// Two experiments of one automation side by side: pick a baseline (A) and a candidate (B) among
// the automation's experiments (the newest two at first); the page reads both details and shows
// the averages and pass counts, then one row per dataset example with each evaluator's score on
// both sides, the changed examples first (experiment-compare.ts). The picks are in the hash.

import { api } from '../api.js';
import { Empty } from '../ui/empty.js';
import { compareExperiments, type SideScore } from './experiment-compare.js';
import {
  AutomationHeader,
  Failure,
  Field,
  Loading,
  Show,
  TableHead,
  enc,
  fmtScore,
  href,
  navigate,
  useLoad,
} from './ui.js';
import { automationUrl, experimentUrl } from './urls.js';
import type { AutomationsExperimentsListResponse, ExperimentDetail } from './wire.js';

/** Experiments offered in the pickers: the newest ones. */
const CHOICES = 100;

function sideText(s: SideScore | undefined): string {
  if (!s) return '—';
  if (s.error) return 'error';
  return `${fmtScore(s.score)}${s.passed === null ? '' : s.passed ? ' ✓' : ' ✗'}`;
}

function sideWords(s: SideScore | undefined): string {
  if (!s) return 'no result';
  if (s.error) return `error: ${s.error}`;
  return `${fmtScore(s.score)}${s.passed === null ? '' : s.passed ? ', passed' : ', failed'}`;
}

export function ExperimentCompare({ id, query }: { id: string; query: URLSearchParams }) {
  const list = useLoad(
    (signal) =>
      api<AutomationsExperimentsListResponse>(automationUrl(id, `/experiments?limit=${CHOICES}&offset=0`), {
        signal,
      }),
    [id],
  );
  const newest = [...(list.data?.data ?? [])].sort((x, y) => (x.createdAt < y.createdAt ? 1 : -1));
  const a = query.get('a') ?? newest[1]?.id ?? '';
  const b = query.get('b') ?? newest[0]?.id ?? '';
  const pick = (which: 'a' | 'b', value: string) =>
    navigate(`/automations/${enc(id)}/experiments/compare`, { a, b, [which]: value });
  return (
    <div>
      <AutomationHeader id={id} title="Compare experiments" current="/experiments" />
      <p>
        <a href={href(`/automations/${enc(id)}/experiments`)}>← Experiments</a>
      </p>
      <Show loaded={list} what="experiments">
        {(page) =>
          page.data.length < 2 ? (
            <Empty>
              Two experiments are needed to compare; this automation has {page.data.length}. Start one from
              the <a href={href(`/automations/${enc(id)}/dataset`)}>Dataset</a> (
              <strong>Start an experiment on the whole dataset</strong>).
            </Empty>
          ) : (
            <>
              <div class="sa-row">
                {(['a', 'b'] as const).map((which) => (
                  <Field key={which} label={which === 'a' ? 'Baseline (A)' : 'Candidate (B)'}>
                    <select
                      value={which === 'a' ? a : b}
                      onChange={(e) => pick(which, e.currentTarget.value)}
                    >
                      {newest.map((x) => (
                        <option key={x.id} value={x.id}>
                          {x.id} ({x.createdAt.slice(0, 16).replace('T', ' ')} UTC, avg {fmtScore(x.avgScore)}
                          )
                        </option>
                      ))}
                    </select>
                  </Field>
                ))}
              </div>
              {a === b ? (
                <p class="sa-muted">Pick two different experiments.</p>
              ) : (
                <Compared key={`${a} ${b}`} id={id} a={a} b={b} />
              )}
            </>
          )
        }
      </Show>
    </div>
  );
}

function Compared({ id, a, b }: { id: string; a: string; b: string }) {
  const both = useLoad(
    (signal) =>
      Promise.all([
        api<ExperimentDetail>(experimentUrl(id, a), { signal }),
        api<ExperimentDetail>(experimentUrl(id, b), { signal }),
      ]),
    [id, a, b],
  );
  if (both.error !== undefined) return <Failure error={both.error} title="Could not load the experiments" />;
  if (!both.data) return <Loading what="the two experiments" />;
  const [x, y] = both.data;
  const c = compareExperiments(x, y);
  return (
    <>
      <div class="sa-scroll">
        <table class="sa-table" data-testid="compare-summary">
          <TableHead cols={['', 'Baseline (A)', 'Candidate (B)']} />
          <tbody>
            {(
              [
                ['Experiment', x.id, y.id],
                ['Status', x.status, y.status],
                [
                  'Runs finished',
                  `${x.completedCount} of ${x.runCount}`,
                  `${y.completedCount} of ${y.runCount}`,
                ],
                [
                  'Passed / failed',
                  `${x.passedCount} / ${x.failedCount}`,
                  `${y.passedCount} / ${y.failedCount}`,
                ],
                ['Average score', fmtScore(x.avgScore), fmtScore(y.avgScore)],
                ['Version', x.version ?? 'latest', y.version ?? 'latest'],
              ] as const
            ).map(([what, va, vb]) => (
              <tr key={what}>
                <th scope="row">{what}</th>
                <td>{va}</td>
                <td>{vb}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Per example</h2>
      <p class="sa-muted" data-testid="compare-changed" aria-live="polite">
        {c.changedCount} of {c.examples.length} examples changed; they are listed first.
      </p>
      <div class="sa-scroll">
        <table class="sa-table" data-testid="compare-table">
          <TableHead cols={['Example', 'Change', ...c.evaluators.map((e) => `${e} (A → B)`)]} />
          <tbody>
            {c.examples.map((row) => (
              <tr key={row.label} data-changed={row.changed ? 'true' : 'false'}>
                <th scope="row">{row.label}</th>
                <td>
                  {row.runA === null
                    ? 'only in B'
                    : row.runB === null
                      ? 'only in A'
                      : row.changed
                        ? 'changed'
                        : 'same'}
                </td>
                {c.evaluators.map((e) => {
                  const s = row.scores[e]!;
                  const up = (s.b?.score ?? 0) - (s.a?.score ?? 0);
                  return (
                    <td
                      key={e}
                      class={
                        row.changed && s.a?.score !== s.b?.score ? (up > 0 ? 'sa-ok' : 'sa-invalid') : ''
                      }
                    >
                      <span aria-hidden="true">
                        {sideText(s.a)} → {sideText(s.b)}
                      </span>
                      <span class="sa-sr">
                        A {sideWords(s.a)}; B {sideWords(s.b)}
                      </span>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
