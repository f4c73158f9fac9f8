// The PostgreSQL ceiling of the automation scenarios: what the database alone does for one queued
// run, with nothing of Sluice in between. Each iteration is the least a run costs the queue:
// `INSERT … RETURNING` (the run row, queued) and a claim, `SELECT … FOR UPDATE SKIP LOCKED` of the
// oldest queued row updated to claimed, two round trips and two commits on the schema the
// service migrates (same table, same indexes). N connections loop at once, so commits share
// WAL flushes as the service's would.
//
//   npx tsx loadtest/automation-pg-ceiling.ts [--url postgres://…] [--duration S] [--connections N]
//
// Without --url it starts a private PostgreSQL (test/helpers/postgres.ts: a temp directory, a
// free port, fsync on) and stops it afterwards. The same loop is exported for scenarios that
// report it next to a Sluice figure in the same run. Load-test tooling, so it imports pg itself.

import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { migrate } from '../src/automation/pg/migrations.js';
import { PgDatabase } from '../src/automation/pg/pool.js';
import { startPostgres } from '../test/helpers/postgres.js';

export interface PgCeiling {
  connections: number;
  seconds: number;
  /** Enqueue + claim pairs per second. */
  iterationsPerSecond: number;
  roundTripsPerSecond: number;
  /** Of one iteration (both round trips), in milliseconds. */
  p50Ms: number;
  p99Ms: number;
}

const INSERT = `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by,
    created_at, sample_rank, record, queue_state, queued_at)
  VALUES ($1, 'load', 'wf_load', 'workflow', 'pending', 'api', 'load', $2, 0.5, '{}', 'queued', clock_timestamp())
  RETURNING id`;
const CLAIM = `WITH next AS (
    SELECT id FROM runs WHERE queue_state = 'queued' ORDER BY queued_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
  UPDATE runs r SET queue_state = 'claimed', node = 'ceiling',
    lease_expires_at = clock_timestamp() + interval '30 seconds', attempt = r.attempt + 1
  FROM next WHERE r.id = next.id
  RETURNING r.id`;

/** Loops on a database that has the automation schema (migrated here if it has not). */
export async function measurePgCeiling(
  url: string,
  options: { durationMs: number; connections: number },
): Promise<PgCeiling> {
  const db = new PgDatabase({ url, poolSize: 1 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  const clients = await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const latencies: number[] = [];
  const prefix = `ceil_${process.pid}_${Date.now().toString(36)}_`;
  let n = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;
  try {
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < deadline) {
          const t = performance.now();
          await c.query(INSERT, [`${prefix}${n++}`, Date.now()]);
          await c.query(CLAIM);
          latencies.push(performance.now() - t);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    connections: options.connections,
    seconds,
    iterationsPerSecond: latencies.length / seconds,
    roundTripsPerSecond: (2 * latencies.length) / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

function argValue(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

async function main(argv: string[]): Promise<void> {
  const durationS = Number(argValue(argv, '--duration') ?? '5');
  const connections = Number(argValue(argv, '--connections') ?? '4');
  if (!(durationS > 0 && durationS <= 60) || !Number.isInteger(connections) || connections < 1) {
    process.stderr.write(
      'usage: automation-pg-ceiling.ts [--url URL] [--duration S (≤ 60)] [--connections N]\n',
    );
    process.exit(2);
  }
  const given = argValue(argv, '--url');
  const server = given ? undefined : await startPostgres();
  try {
    const url = given ?? (await server!.createDatabase());
    const r = await measurePgCeiling(url, { durationMs: durationS * 1000, connections });
    process.stdout.write(
      `PostgreSQL ceiling (INSERT … RETURNING + SELECT … FOR UPDATE SKIP LOCKED claim), ` +
        `${r.connections} connection(s), ${r.seconds.toFixed(1)} s: ` +
        `${Math.round(r.roundTripsPerSecond)} round trips/s, ${Math.round(r.iterationsPerSecond)} runs/s, ` +
        `p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms per run\n`,
    );
  } finally {
    await server?.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main(process.argv.slice(2));
