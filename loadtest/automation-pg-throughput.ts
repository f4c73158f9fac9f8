// Synchronous runs on PostgreSQL against the queue ceiling of the same server in the same run, and
// what each completed run costs the database under that load:
//   1. the ceiling (automation-pg-ceiling.ts) on a database of its own, --connections connections;
//   2. one node, --connections clients of POST /runs?wait_for_completion=10 (workflows.text-report):
//      runs/s, and per completed run the transactions committed (pg_stat_database.xact_commit) and
//      the WAL flushes (pg_stat_wal.wal_sync) over the window;
//   3. the same with two nodes on this machine, the clients split over both.
//
//   npx tsx loadtest/automation-pg-throughput.ts [--duration S (default 5, ≤ 20)] [--connections N (default 16)]
//
// Starts a private PostgreSQL (test/helpers/postgres.ts, fsync on) and `sluice automation`
// processes (bin/sluice.js), and stops them by pid. Load-test tooling, so it imports pg itself.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measurePgCeiling } from './automation-pg-ceiling.js';
import { arg, counters, load, SYNC, type Measured } from './automation-pg-load.js';
import { makeRemote, startNode, type Node } from './automation-pg-nodes.js';
import { startPostgres } from '../test/helpers/postgres.js';

/** The load of `clients` sync runs over `urls`, with its cost per completed run. */
async function measured(
  url: string,
  urls: string[],
  clients: number,
  ms: number,
): Promise<Measured & { commitsPerRun: number; walSyncsPerRun: number }> {
  const before = await counters(url);
  const m = await load(urls, clients, ms, SYNC);
  const after = await counters(url);
  // The probe's own transaction (one) is not the nodes'.
  const per = (x: number) => (m.requests > 0 ? x / m.requests : NaN);
  return {
    ...m,
    commitsPerRun: per(after.commits - before.commits - 1),
    walSyncsPerRun: per(after.walSyncs - before.walSyncs),
  };
}

async function main(): Promise<void> {
  const seconds = Number(arg('--duration', '5'));
  const connections = Number(arg('--connections', '16'));
  if (!(seconds > 0 && seconds <= 20) || !(Number.isInteger(connections) && connections >= 1))
    throw new Error('--duration 1..20, --connections ≥ 1');
  const ms = seconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lt-pgtp-'));
  const server = await startPostgres();
  const nodes: Node[] = [];
  const out = (line: string) => process.stdout.write(line + '\n');
  try {
    // The ceiling's rows stay claimed by a node that does not exist: a database of their own,
    // so that no node takes them over.
    const ceiling = await measurePgCeiling(await server.createDatabase(), { durationMs: ms, connections });
    const c = ceiling.iterationsPerSecond;
    out(`ceiling, ${connections} connections: ${Math.round(c)} runs/s`);
    const url = await server.createDatabase();
    const env = { AUTOMATION_DATABASE_URL: url, AUTOMATION_REGISTRY_URL: makeRemote(dir) };
    nodes.push(await startNode('a', dir, env));
    const a = [nodes[0]!.url];
    await load(a, connections, 1000, SYNC); // warm-up: worker threads, registry cache, connections
    const fmt = (label: string, m: Awaited<ReturnType<typeof measured>>) =>
      `${label}: ${Math.round(m.perSecond)} runs/s (${(m.perSecond / c).toFixed(3)} of the ceiling), ` +
      `p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.requests} ok, ${m.errors} errors; ` +
      `per run ${m.commitsPerRun.toFixed(2)} transactions, ${m.walSyncsPerRun.toFixed(2)} WAL flushes`;
    out(fmt(`one node, ${connections} clients`, await measured(url, a, connections, ms)));
    nodes.push(await startNode('b', dir, env));
    const ab = nodes.map((n) => n.url);
    await load(ab, connections, 1000, SYNC);
    out(fmt(`two nodes, ${connections} clients`, await measured(url, ab, connections, ms)));
  } finally {
    for (const n of nodes) await n.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
