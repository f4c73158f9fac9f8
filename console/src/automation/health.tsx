// Review health: reviewed correctness over time with its 95% Wilson band (the server's rolling
// points) as an SVG chart, the summary, and the buckets as a table (the chart's text equivalent).

import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { healthGeometry, type ChartBox, type HealthPoint } from './health-chart.js';
import { AutomationHeader, Field, Show, TableHead, enc, fmtTime, navigate, When, useLoad } from './ui.js';
import { automationUrl } from './urls.js';
import type { RunReviewHealthResponse } from './wire.js';

const BOX: ChartBox = { width: 720, height: 260, left: 44, right: 12, top: 12, bottom: 28 };
const pct = (v: number | null | undefined) =>
  v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`;

export function Health({ id, query }: { id: string; query: URLSearchParams }) {
  const from = query.get('from') ?? '-30d';
  const to = query.get('to') ?? '';
  const bucket = query.get('bucket') ?? 'day';
  const window = query.get('rollingWindow') ?? '';
  const params = new URLSearchParams({ from, bucket });
  if (to) params.set('to', to);
  if (window) params.set('rollingWindow', window);
  const health = useLoad(
    (signal) => api<RunReviewHealthResponse>(automationUrl(id, `/reviews/health?${params}`), { signal }),
    [id, params.toString()],
  );
  const [draft, setDraft] = useState({ from, to, bucket, window });
  return (
    <div>
      <AutomationHeader id={id} title="Review health" current="/health" />
      <form
        class="sa-row"
        aria-label="Health range"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/automations/${enc(id)}/health`, {
            from: draft.from,
            to: draft.to,
            bucket: draft.bucket,
            rollingWindow: draft.window,
          });
        }}
      >
        <Field label="From" hint="ISO date, or relative (-30d)">
          <input value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </Field>
        <Field label="To" hint="empty = now">
          <input value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </Field>
        <Field label="Bucket">
          <select
            value={draft.bucket}
            onChange={(e) => setDraft({ ...draft, bucket: e.currentTarget.value })}
          >
            <option value="day">day</option>
            <option value="week">week</option>
            <option value="month">month</option>
          </select>
        </Field>
        <Field label="Rolling window (reviews)" hint="default 100">
          <input
            type="number"
            min="1"
            value={draft.window}
            onInput={(e) => setDraft({ ...draft, window: e.currentTarget.value })}
          />
        </Field>
        <button type="submit">Show</button>
      </form>
      <Show loaded={health} what="review health">
        {(h) => (
          <>
            <dl class="sa-facts" aria-label="Summary" data-testid="health-summary">
              <dt>Runs</dt>
              <dd>{h.summary.totalRuns}</dd>
              <dt>Reviewed (with a verdict)</dt>
              <dd>
                {h.summary.reviewedRuns} ({pct(h.summary.reviewCoverage)} coverage)
              </dd>
              <dt>Correct / incorrect / nits</dt>
              <dd>
                {h.summary.correctReviews} / {h.summary.incorrectReviews} / {h.summary.nitReviews}
              </dd>
              <dt>Reviewed correctness</dt>
              <dd>
                {pct(h.summary.reviewedCorrectness)} (95% interval {pct(h.summary.confidence.lower)} –{' '}
                {pct(h.summary.confidence.upper)})
              </dd>
            </dl>
            <HealthChart data={h} />
            <details>
              <summary>Buckets ({h.granularity.bucket})</summary>
              <div class="sa-scroll">
                <table class="sa-table">
                  <TableHead
                    cols={['Start', 'Runs', 'Reviewed', 'Coverage', 'Correct', 'Incorrect', 'Correctness']}
                  />
                  <tbody>
                    {h.buckets.map((b) => (
                      <tr key={b.start}>
                        <td>
                          <When at={b.start} />
                        </td>
                        <td>{b.totalRuns}</td>
                        <td>{b.reviewedRuns}</td>
                        <td>{pct(b.reviewCoverage)}</td>
                        <td>{b.correctReviews}</td>
                        <td>{b.incorrectReviews}</td>
                        <td>{pct(b.reviewedCorrectness)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          </>
        )}
      </Show>
    </div>
  );
}

export function HealthChart({ data }: { data: RunReviewHealthResponse }) {
  const points: HealthPoint[] = data.rolling.map((p) => ({
    t: Date.parse(p.at),
    value: p.reviewedCorrectness,
    lower: p.confidenceLower,
    upper: p.confidenceUpper,
  }));
  if (points.length === 0) {
    return <p class="sa-muted">No reviewed runs in this range: nothing to chart yet.</p>;
  }
  const g = healthGeometry(points, BOX);
  const last = data.rolling[data.rolling.length - 1]!;
  const title = `Reviewed correctness over time, rolling window of ${data.granularity.rollingWindow} reviews: latest ${pct(
    last.reviewedCorrectness,
  )}, 95% interval ${pct(last.confidenceLower)} to ${pct(last.confidenceUpper)}`;
  return (
    <figure class="sa-chart">
      <svg
        viewBox={`0 0 ${BOX.width} ${BOX.height}`}
        role="img"
        aria-labelledby="health-title"
        data-testid="health-chart"
      >
        <title id="health-title">{title}</title>
        {g.ticks.map((t) => (
          <g key={t.value}>
            <line class="sa-chart-grid" x1={BOX.left} x2={BOX.width - BOX.right} y1={t.y} y2={t.y} />
            <text class="sa-chart-label" x={BOX.left - 6} y={t.y + 4} text-anchor="end">
              {`${t.value * 100}%`}
            </text>
          </g>
        ))}
        <path class="sa-chart-band" d={g.band} />
        <path class="sa-chart-line" d={g.line} fill="none" />
        {g.points.map((p, i) => (
          <circle key={i} class="sa-chart-dot" cx={p.x} cy={p.y} r={points.length > 60 ? 1.5 : 3}>
            <title>{`${fmtTime(data.rolling[i]!.at)}: ${pct(data.rolling[i]!.reviewedCorrectness)} (${pct(
              data.rolling[i]!.confidenceLower,
            )} – ${pct(data.rolling[i]!.confidenceUpper)})`}</title>
          </circle>
        ))}
        <text class="sa-chart-label" x={BOX.left} y={BOX.height - 8}>
          {fmtTime(new Date(g.t0).toISOString())}
        </text>
        <text class="sa-chart-label" x={BOX.width - BOX.right} y={BOX.height - 8} text-anchor="end">
          {fmtTime(new Date(g.t1).toISOString())}
        </text>
      </svg>
      <figcaption class="sa-muted">
        Line: reviewed correctness over the last {data.granularity.rollingWindow} reviewed runs at each
        review. Band: its 95% Wilson confidence interval.
      </figcaption>
    </figure>
  );
}
