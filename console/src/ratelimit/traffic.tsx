// Hits, over-limit and near-limit counts per rule as live sparklines: the process totals are
// polled every two seconds and each point is the increase since the previous poll.

import { useRef } from 'preact/hooks';
import { ErrorBox } from '../ui/error-box.js';
import { useLoad } from '../ui/hooks.js';
import { Sparkline } from '../ui/sparkline.js';
import { Table, type Column } from '../ui/table.js';
import { loadStats, type RuleCounters } from './api.js';

const POLL_MS = 2_000;
const POINTS = 30;
const SERIES = ['total_hits', 'over_limit', 'near_limit'] as const;
type Series = (typeof SERIES)[number];

interface Row {
  key: string;
  totals: RuleCounters;
  history: Record<Series, number[]>;
}

function sparkColumn(key: string, label: string, series: Series, what: string, tone: string): Column<Row> {
  return {
    key,
    label,
    render: (r) => <Sparkline values={r.history[series]} label={`${what} of ${r.key}`} tone={tone} />,
  };
}

export function TrafficView() {
  const last = useRef(new Map<string, RuleCounters>());
  const history = useRef(new Map<string, Record<Series, number[]>>());
  const stats = useLoad(
    async (signal) => {
      const answer = await loadStats(signal);
      for (const rule of answer.rules) {
        const previous = last.current.get(rule.key);
        const h = history.current.get(rule.key) ?? { total_hits: [], over_limit: [], near_limit: [] };
        for (const s of SERIES) {
          h[s].push(previous ? Math.max(0, rule[s] - previous[s]) : 0);
          if (h[s].length > POINTS) h[s].shift();
        }
        history.current.set(rule.key, h);
        last.current.set(rule.key, rule);
      }
      return answer;
    },
    [],
    POLL_MS,
  );
  const rows: Row[] = (stats.data?.rules ?? []).map((r) => ({
    key: r.key,
    totals: r,
    history: history.current.get(r.key) ?? { total_hits: [], over_limit: [], near_limit: [] },
  }));
  return (
    <section aria-labelledby="rl-traffic">
      <h1 id="rl-traffic">Traffic per rule</h1>
      <p class="muted">Hits per two seconds (lines) and totals since the service started.</p>
      {stats.error ? (
        <ErrorBox error={stats.error} context="Loading the counters" service="rate limit" />
      ) : null}
      <Table<Row>
        caption="Counters per rule"
        rowKey={(r) => r.key}
        rows={rows}
        pageSize={50}
        empty={stats.data ? 'No rule has been hit yet.' : 'Loading…'}
        columns={[
          { key: 'key', label: 'Rule', render: (r) => <code>{r.key}</code> },
          sparkColumn('hits', 'Hits', 'total_hits', 'hits', 'spark-hit'),
          sparkColumn('over', 'Over limit', 'over_limit', 'over-limit hits', 'spark-over'),
          sparkColumn('near', 'Near limit', 'near_limit', 'near-limit hits', 'spark-near'),
          { key: 'total', label: 'Total hits', numeric: true, render: (r) => String(r.totals.total_hits) },
          {
            key: 'overTotal',
            label: 'Total over',
            numeric: true,
            render: (r) => String(r.totals.over_limit),
          },
        ]}
      />
    </section>
  );
}
