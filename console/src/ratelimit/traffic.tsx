// Hits, over-limit and near-limit counts per rule as sparklines. The lines are the service's own
// ring of recent increases (GET /json/stats keeps one per rule), so they show the last minute as
// soon as the page opens; every configured rule is listed, a rule without traffic as zeros.

import { ErrorBox } from '../ui/error-box.js';
import { Empty } from '../ui/empty.js';
import { useLoad } from '../ui/hooks.js';
import { Sparkline } from '../ui/sparkline.js';
import { Table, type Column } from '../ui/table.js';
import { fmtDuration } from '../ui/time.js';
import { loadStats, type RuleCounters } from './api.js';

const POLL_MS = 2_000;
type Series = 'total_hits' | 'over_limit' | 'near_limit';

function sparkColumn(
  key: string,
  label: string,
  series: Series,
  what: string,
  tone: string,
): Column<RuleCounters> {
  return {
    key,
    label,
    render: (r) => <Sparkline values={r.history?.[series] ?? []} label={`${what} of ${r.key}`} tone={tone} />,
  };
}

export function TrafficView() {
  const stats = useLoad((signal) => loadStats(signal), [], POLL_MS);
  const data = stats.data;
  const step = fmtDuration(data?.historyStepMs ?? POLL_MS);
  const span = fmtDuration((data?.historyStepMs ?? POLL_MS) * (data?.historyPoints ?? 30));
  return (
    <section aria-labelledby="rl-traffic">
      <h1 id="rl-traffic">Traffic per rule</h1>
      <p class="muted">
        Hits per {step} over the last {span} (lines, kept by the service) and totals since it started.
      </p>
      {stats.error ? (
        <ErrorBox error={stats.error} context="Loading the counters" service="rate limit" />
      ) : null}
      {data && data.rules.length === 0 ? (
        <Empty>
          No rule is loaded and none has been hit. Put a rule file in the configuration folder (
          <code>RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/&lt;domain&gt;.yaml</code>, docs/ratelimit.md) and
          open <strong>Configuration</strong> to check it loaded.
        </Empty>
      ) : (
        <Table<RuleCounters>
          caption="Counters per rule"
          rowKey={(r) => r.key}
          rows={data?.rules ?? []}
          pageSize={50}
          empty="Loading…"
          columns={[
            { key: 'key', label: 'Rule', render: (r) => <code>{r.key}</code> },
            sparkColumn('hits', 'Hits', 'total_hits', 'hits', 'spark-hit'),
            sparkColumn('over', 'Over limit', 'over_limit', 'over-limit hits', 'spark-over'),
            sparkColumn('near', 'Near limit', 'near_limit', 'near-limit hits', 'spark-near'),
            { key: 'total', label: 'Total hits', numeric: true, render: (r) => String(r.total_hits) },
            { key: 'overTotal', label: 'Total over', numeric: true, render: (r) => String(r.over_limit) },
          ]}
        />
      )}
    </section>
  );
}
