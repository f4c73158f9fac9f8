// What each statement of the run path costs the database under load: a private PostgreSQL
// (test/helpers/postgres.ts, fsync on) with pg_stat_statements loaded, one or two nodes, N closed
// loops of synchronous runs of workflows.text-report for S seconds, then per statement kind its
// calls, execution time in all and per call, rows, and shared buffers hit (a statement that reads
// far more buffers than the rows it touches is scanning; this is how the claim's whole-table
// scans of run_details and run_events were found, docs/benchmarks.md "The claim's plan").
//
//   npx tsx loadtest/automation-pg-statement-costs.ts [--nodes 1|2] [--clients N (16)] [--duration S (5)]
//
// Load-test tooling, so it imports pg itself.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { arg, load, SYNC } from './automation-pg-load.js';
import { makeRemote, startNode, type Node } from './automation-pg-nodes.js';
import { startPostgres } from '../test/helpers/postgres.js';

const nodeCount = Number(arg('--nodes', '1'));
const clients = Number(arg('--clients', '16'));
const seconds = Number(arg('--duration', '5'));

interface Row {
  calls: string;
  ms: string;
  per_call: string;
  rows: string;
  hit: string;
  query: string;
}

async function main(): Promise<void> {
  if (nodeCount !== 1 && nodeCount !== 2) throw new Error('--nodes 1 or 2');
  if (!(Number.isInteger(clients) && clients >= 1 && seconds > 0 && seconds <= 20))
    throw new Error('--clients N ≥ 1, --duration 1..20');
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lt-costs-'));
  const server = await startPostgres();
  const nodes: Node[] = [];
  try {
    const url = await server.createDatabase();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await admin.end();
    await server.restart();
    const probe = new pg.Client({ connectionString: url, application_name: 'load-probe' });
    await probe.connect();
    try {
      await probe.query('CREATE EXTENSION pg_stat_statements');
      const env = { AUTOMATION_DATABASE_URL: url, AUTOMATION_REGISTRY_URL: makeRemote(dir) };
      for (const name of ['a', 'b'].slice(0, nodeCount)) nodes.push(await startNode(name, dir, env));
      const urls = nodes.map((n) => n.url);
      await load(urls, clients, 1500, SYNC); // warm-up: workers, registry cache, connections
      await probe.query('SELECT pg_stat_statements_reset()');
      const m = await load(urls, clients, seconds * 1000, SYNC);
      const { rows } = await probe.query<Row>(
        `SELECT calls, round(total_exec_time::numeric, 1) AS ms,
           round((total_exec_time / calls)::numeric, 3) AS per_call, rows, shared_blks_hit AS hit,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
         FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
         ORDER BY total_exec_time DESC LIMIT 12`,
      );
      process.stdout.write(
        `${m.requests} runs completed, ${m.errors} errors, ${clients} clients, ${nodeCount} node(s), ${seconds} s\n` +
          'per statement: calls, ms in all, ms per call, rows, buffers hit per run completed, text\n',
      );
      for (const r of rows)
        process.stdout.write(
          `  ${r.calls.padStart(6)} ${r.ms.padStart(8)} ${r.per_call.padStart(7)} ${r.rows.padStart(6)} ` +
            `${(Number(r.hit) / m.requests).toFixed(1).padStart(7)}  ${r.query}\n`,
        );
    } finally {
      await probe.end();
    }
  } finally {
    for (const n of nodes) await n.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
