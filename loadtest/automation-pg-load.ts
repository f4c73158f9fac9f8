// What the PostgreSQL load tools (automation-pg*.ts) share: the command-line flags, the sync run
// request, the HTTP client (a closed loop of fetch calls in this process per client, one request
// in flight per client) and the database's counters of commits and WAL flushes.

import pg from 'pg';
import { TOKEN } from './automation-pg-nodes.js';

export function arg(flag: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** A synchronous run of workflows.text-report. */
export const SYNC = {
  method: 'POST',
  path: '/api/v1/runs?wait_for_completion=10',
  body: { target: 'workflows.text-report', input: { text: 'the quick brown fox jumps over the lazy dog' } },
  ok: 200,
};

export interface Counters {
  commits: number;
  walSyncs: number;
}

// A backend sends its statistics when it goes idle, at most once a second, else after an idle
// timeout of 10 s (PostgreSQL 15, pgstat_report_stat): counters are read once that has passed.
const settle = () => new Promise((resolve) => setTimeout(resolve, 11_000));

/**
 * Transactions committed in the database of `url` (pg_stat_database.xact_commit, read-only ones
 * included; this probe adds one) and the server's WAL flushes (pg_stat_wal.wal_sync), once the
 * backends' statistics have settled.
 */
export async function counters(url: string): Promise<Counters> {
  await settle();
  const c = new pg.Client({ connectionString: url, application_name: 'load-probe' });
  await c.connect();
  try {
    const { rows } = await c.query<{ commits: string; syncs: string }>(
      `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits,
              (SELECT wal_sync FROM pg_stat_wal) AS syncs`,
    );
    return { commits: Number(rows[0]!.commits), walSyncs: Number(rows[0]!.syncs) };
  } finally {
    await c.end();
  }
}

export interface Measured {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** `clients` closed loops for `ms`, client i aimed at urls[i % urls.length]. */
export async function load(
  urls: string[],
  clients: number,
  ms: number,
  request: { method: string; path: string; body?: unknown; ok: number },
): Promise<Measured> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const base = urls[i % urls.length]!;
      while (performance.now() < deadline) {
        const t = performance.now();
        const res = await fetch(base + request.path, {
          method: request.method,
          headers: {
            authorization: `Bearer ${TOKEN}`,
            ...(request.body ? { 'content-type': 'application/json' } : {}),
          },
          ...(request.body ? { body: JSON.stringify(request.body) } : {}),
        });
        await res.arrayBuffer();
        if (res.status === request.ok) latencies.push(performance.now() - t);
        else errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
  };
}
