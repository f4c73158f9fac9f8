// Before and after on PostgreSQL in one window: a node of another checkout (--before DIR, e.g. a
// `git worktree` of main) and a node of this one run at the same time, each on its own database
// of one private PostgreSQL, and are loaded in turn — before, after, the ceiling — for --rounds
// rounds, so that the machine's load (shared with other work) moves both alike. Each window is
// --connections clients of POST /runs?wait_for_completion=10 (workflows.text-report) for
// --duration seconds; per completed run it reports the transactions committed in that node's
// database (pg_stat_database.xact_commit) and the server's WAL flushes (pg_stat_wal.wal_sync,
// only one node is loaded at a time). The ceiling (automation-pg-ceiling.ts) runs on a third
// database with as many connections.
//
//   npx tsx loadtest/automation-pg-ab.ts --before DIR [--rounds N (3)] [--duration S (5)] [--connections N (16)]
//
// Stops the nodes and the server by pid. Load-test tooling, so it imports pg itself.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { measurePgCeiling } from './automation-pg-ceiling.js';
import { arg, counters, load, SYNC } from './automation-pg-load.js';
import { makeRemote, startNode, type Node } from './automation-pg-nodes.js';
import { startPostgres } from '../test/helpers/postgres.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const given = arg('--before', '');
  if (!given) throw new Error('--before DIR is required');
  const beforeDir = resolve(given);
  const rounds = Number(arg('--rounds', '3'));
  const seconds = Number(arg('--duration', '5'));
  const connections = Number(arg('--connections', '16'));
  if (!(rounds >= 1 && seconds > 0 && seconds <= 20 && connections >= 1))
    throw new Error('--rounds ≥ 1, --duration 1..20, --connections ≥ 1');
  const ms = seconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lt-pgab-'));
  const server = await startPostgres();
  const nodes: Node[] = [];
  const out = (line: string) => process.stdout.write(line + '\n');
  try {
    const remote = makeRemote(dir);
    const ceilingUrl = await server.createDatabase();
    const sides = [] as {
      name: string;
      url: string;
      node: Node;
      runs: number[];
      xacts: number[];
      syncs: number[];
    }[];
    for (const [name, from] of [
      ['before', beforeDir],
      ['after', undefined],
    ] as const) {
      const url = await server.createDatabase();
      const node = await startNode(
        name,
        dir,
        { AUTOMATION_DATABASE_URL: url, AUTOMATION_REGISTRY_URL: remote },
        from,
      );
      nodes.push(node);
      await load([node.url], connections, 1000, SYNC); // warm-up
      sides.push({ name, url, node, runs: [], xacts: [], syncs: [] });
    }
    const ceilings: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const side of sides) {
        const before = await counters(side.url);
        const m = await load([side.node.url], connections, ms, SYNC);
        const after = await counters(side.url);
        const perRun = (x: number) => (m.requests > 0 ? x / m.requests : NaN);
        side.runs.push(m.perSecond);
        side.xacts.push(perRun(after.commits - before.commits - 1));
        side.syncs.push(perRun(after.walSyncs - before.walSyncs));
        out(
          `round ${round} ${side.name}: ${Math.round(m.perSecond)} runs/s, p50 ${m.p50.toFixed(1)} ms, ` +
            `${m.requests} ok, ${m.errors} errors; per run ${side.xacts.at(-1)!.toFixed(2)} transactions, ` +
            `${side.syncs.at(-1)!.toFixed(2)} WAL flushes`,
        );
      }
      const c = await measurePgCeiling(ceilingUrl, { durationMs: ms, connections });
      ceilings.push(c.iterationsPerSecond);
      out(`round ${round} ceiling: ${Math.round(c.iterationsPerSecond)} runs/s`);
    }
    const c = median(ceilings);
    for (const side of sides)
      out(
        `median ${side.name}: ${Math.round(median(side.runs))} runs/s = ${(median(side.runs) / c).toFixed(3)} ` +
          `of the ceiling (${Math.round(c)} runs/s), ${median(side.xacts).toFixed(2)} transactions and ` +
          `${median(side.syncs).toFixed(2)} WAL flushes per run`,
      );
  } finally {
    for (const n of nodes) await n.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
