// Synchronous runs on PostgreSQL against the queue ceiling of the same server in the same run, and
// what each completed run costs the database under that load:
//   1. the ceiling (automation-pg-ceiling.ts) on a database of its own, --connections connections;
//   2. one node, --connections clients of POST /runs?wait_for_completion=10 (workflows.text-report):
//      runs/s, and per completed run the transactions committed (pg_stat_database.xact_commit) and
//      the WAL flushes (pg_stat_wal.wal_sync) over the window;
//   3. the same with two nodes on this machine, the clients split over both;
//   4. one node again, on the tables the two nodes left (their growth apart from the second node);
//   and for each, the CPU time (ms) per run or job of the node processes (their worker threads
//   included), of the PostgreSQL server (its backends and auxiliary processes, from /proc) and
//   of this process (the clients): on a machine whose cores are all busy, what bounds runs/s.
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
import { cpuSince, treeCpu } from '../test/helpers/proc.js';

/** CPU time (ms) each side used over a window: the nodes, the PostgreSQL server, this process. */
interface CpuUse {
  nodes: number;
  postgres: number;
  clients: number;
}

/** Runs `body` and measures the CPU time the node processes, the server and this process used. */
async function withCpu<T>(
  nodePids: number[],
  postgresPid: number,
  body: () => Promise<T>,
): Promise<[T, CpuUse]> {
  const nodes0 = nodePids.map((p) => treeCpu(p));
  const pg0 = treeCpu(postgresPid);
  // Backends that end within the window (the ceiling's clients disconnect at its end) are read
  // while they run: the last reading of each counts (at most one interval of its time is lost).
  const pgLast = new Map(pg0);
  const sample = () => {
    for (const [pid, ms] of treeCpu(postgresPid)) pgLast.set(pid, ms);
  };
  const sampler = setInterval(sample, 100);
  const self0 = process.cpuUsage();
  let result: T;
  try {
    result = await body();
  } finally {
    clearInterval(sampler);
  }
  const self = process.cpuUsage(self0);
  sample();
  return [
    result,
    {
      nodes: nodePids.reduce((sum, p, i) => sum + cpuSince(nodes0[i]!, treeCpu(p)), 0),
      postgres: cpuSince(pg0, pgLast),
      clients: (self.user + self.system) / 1000,
    },
  ];
}

/** The load of `clients` sync runs over `urls`, with its cost per completed run. */
async function measured(
  url: string,
  urls: string[],
  clients: number,
  ms: number,
  cpu: { nodePids: number[]; postgresPid: number },
): Promise<Measured & { commitsPerRun: number; walSyncsPerRun: number; cpuPerRun: CpuUse }> {
  const before = await counters(url);
  const [m, used] = await withCpu(cpu.nodePids, cpu.postgresPid, () => load(urls, clients, ms, SYNC));
  const after = await counters(url);
  // The probe's own transaction (one) is not the nodes'.
  const per = (x: number) => (m.requests > 0 ? x / m.requests : NaN);
  return {
    ...m,
    commitsPerRun: per(after.commits - before.commits - 1),
    walSyncsPerRun: per(after.walSyncs - before.walSyncs),
    cpuPerRun: { nodes: per(used.nodes), postgres: per(used.postgres), clients: per(used.clients) },
  };
}

const cpuText = (c: CpuUse) =>
  `node ${c.nodes.toFixed(2)}, PostgreSQL ${c.postgres.toFixed(2)}, clients ${c.clients.toFixed(2)}, ` +
  `all ${(c.nodes + c.postgres + c.clients).toFixed(2)}`;

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
    const postgresPid = server.pid!;
    const ceilingUrl = await server.createDatabase();
    const [ceiling, ceilingCpu] = await withCpu([], postgresPid, () =>
      measurePgCeiling(ceilingUrl, { durationMs: ms, connections }),
    );
    const c = ceiling.iterationsPerSecond;
    const jobs = ceiling.iterationsPerSecond * (ms / 1000);
    out(
      `ceiling, ${connections} connections: ${Math.round(c)} runs/s; CPU ms per job: ` +
        cpuText({ nodes: 0, postgres: ceilingCpu.postgres / jobs, clients: ceilingCpu.clients / jobs }),
    );
    const url = await server.createDatabase();
    const env = { AUTOMATION_DATABASE_URL: url, AUTOMATION_REGISTRY_URL: makeRemote(dir) };
    nodes.push(await startNode('a', dir, env));
    const a = [nodes[0]!.url];
    await load(a, connections, 1000, SYNC); // warm-up: worker threads, registry cache, connections
    const fmt = (label: string, m: Awaited<ReturnType<typeof measured>>) =>
      `${label}: ${Math.round(m.perSecond)} runs/s (${(m.perSecond / c).toFixed(3)} of the ceiling), ` +
      `p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.requests} ok, ${m.errors} errors; ` +
      `per run ${m.commitsPerRun.toFixed(2)} transactions, ${m.walSyncsPerRun.toFixed(2)} WAL flushes; ` +
      `CPU ms per run: ${cpuText(m.cpuPerRun)}`;
    const cpuOf = () => ({ nodePids: nodes.map((n) => n.child.pid), postgresPid });
    out(fmt(`one node, ${connections} clients`, await measured(url, a, connections, ms, cpuOf())));
    nodes.push(await startNode('b', dir, env));
    const ab = nodes.map((n) => n.url);
    await load(ab, connections, 1000, SYNC);
    out(fmt(`two nodes, ${connections} clients`, await measured(url, ab, connections, ms, cpuOf())));
    // One node again, on the tables as the two nodes left them: what the tables' growth costs,
    // apart from what the second node does.
    await nodes.pop()!.child.stop(5000);
    await load(a, connections, 1000, SYNC);
    out(fmt(`one node again, ${connections} clients`, await measured(url, a, connections, ms, cpuOf())));
  } finally {
    for (const n of nodes) await n.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
