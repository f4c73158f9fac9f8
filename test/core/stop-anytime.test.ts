// A stop signal at any moment: `node bin/sluice.js serve` (all three services, two front-end
// threads) is sent SIGTERM on its process group at a spread of moments through start-up — each
// moment is a line the start prints, so the stop lands on a state, not after a sleep — and
// after the banner. Every stop must end with status 0 and without a native failure (an
// uv_loop_close assertion, an abort, a segfault). Then a stop under produce and run load, and a
// restart over the same data directory that serves every service and still has every record and
// run the stopped process acknowledged.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ensureSluiceBuilt,
  freeSluicePorts,
  NATIVE_FAILURE,
  SluiceProcess,
  type SluicePorts,
} from '../helpers/sluice-process.js';
import { describeEachTransport, TRANSPORTS } from '../helpers/transports.js';
import { waitUntil, withinHang } from '../helpers/wait.js';

/** Stops per transport; the acceptance is all of them clean. */
const STOPS_PER_TRANSPORT = 20;
const GRACE_MS = 10_000;
/** Only a hang guard: the process must have exited well before this (grace + forced-stop slack). */
const EXIT_GUARD_MS = GRACE_MS + 120_000;

/** The moments of a start-up, in the order the start reports them (LOG_LEVEL=debug). */
const MOMENTS: readonly { name: string; line: RegExp }[] = [
  { name: 'supervisor starting', line: /\[supervisor\] starting/ },
  { name: 'rate limit configured (thread 1)', line: /rate limit configuration loaded .*"thread":1\b/ },
  { name: 'rate limit configured (thread 0)', line: /rate limit configuration loaded .*"thread":0\b/ },
  { name: 'gRPC listening', line: /gRPC server listening/ },
  { name: 'statistics started', line: /statistics outputs started/ },
  { name: 'streams listening', line: /streams listening/ },
  { name: 'automation registry opening', line: /opening the automation registry/ },
  { name: 'automation registry seeded', line: /automation registry created .*"from":"seeded"/ },
  { name: 'automation listening', line: /automation service listening/ },
  { name: 'after the banner', line: /Use it as "Authorization: Bearer/ },
];

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-stop-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

before(async () => {
  if (TRANSPORTS.length > 0) await ensureSluiceBuilt();
});

/** Waits for the exit after a stop signal; returns how long it took (reported, never asserted). */
async function expectCleanExit(proc: SluiceProcess, what: string): Promise<number> {
  const since = Date.now();
  const { code, signal } = await withinHang(`${what}: exit after SIGTERM`, proc.exited, EXIT_GUARD_MS);
  const output = proc.output();
  assert.doesNotMatch(output, NATIVE_FAILURE, `${what}: native failure\n${output}`);
  assert.equal(signal, null, `${what}: killed by ${signal}\n${output}`);
  assert.equal(code, 0, `${what}: exit status\n${output}`);
  return Date.now() - since;
}

describeEachTransport('a stop signal during start-up', (transport) => {
  const procs: SluiceProcess[] = [];
  after(async () => {
    await Promise.all(procs.map((p) => p.kill()));
  });
  /** A start that reached `line`. */
  const startUntil = async (line: RegExp): Promise<SluiceProcess> => {
    const proc = new SluiceProcess({
      transport,
      dataDir: tempDir(),
      ports: await freeSluicePorts(),
      env: { LOG_LEVEL: 'debug', SLUICE_SHUTDOWN_GRACE: `${GRACE_MS}ms` },
    });
    procs.push(proc);
    await proc.waitForLine(line);
    return proc;
  };
  // Two processes at a time: each case mostly waits on its process.
  describe('each moment', { concurrency: 2 }, () => {
    for (let i = 0; i < STOPS_PER_TRANSPORT; i++) {
      const moment = MOMENTS[i % MOMENTS.length]!;
      it(`stop ${i + 1}/${STOPS_PER_TRANSPORT}: at "${moment.name}"`, async (t) => {
        const proc = await startUntil(moment.line);
        proc.signalGroup('SIGTERM');
        const ms = await expectCleanExit(proc, `stop at "${moment.name}"`);
        t.diagnostic(`exited ${ms} ms after SIGTERM`);
      });
    }
  });
});

const VND = 'application/vnd.streams.json.v2+json';

async function call(
  port: number,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: path.startsWith('/streams/') ? VND : 'application/json',
      ...(body === undefined
        ? {}
        : { 'content-type': path.startsWith('/streams/topic/') ? VND : 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describeEachTransport('a stop signal under load, then a restart', (transport) => {
  let proc: SluiceProcess | undefined;
  after(async () => {
    await proc?.kill();
  });

  it('drains, exits 0, and the restart has every acknowledged record and run', async () => {
    const dataDir = tempDir();
    const ports: SluicePorts = await freeSluicePorts();
    const env = { SLUICE_SHUTDOWN_GRACE: `${GRACE_MS}ms` };
    proc = new SluiceProcess({ transport, dataDir, ports, env });
    const token = await proc.firstKey();
    const streams = ports.STREAMS_PORT;
    const automation = ports.AUTOMATION_PORT;
    const created = await call(streams, token, 'POST', '/streams/topics/topic', {
      topic_name: 'load',
      partitions: 2,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));

    // Producers and run starters go on until the server stops answering; what it acknowledged
    // is recorded.
    const records: { key: string; partition: number; offset: number }[] = [];
    const runs: string[] = [];
    let stopped = false;
    const producer = async (p: number) => {
      for (let n = 0; !stopped; n++) {
        const keys = [0, 1, 2, 3].map((i) => `p${p}-${n}-${i}`);
        let res;
        try {
          res = await call(streams, token, 'POST', '/streams/topic/load', {
            records: keys.map((key) => ({ key, value: { p, n } })),
          });
        } catch {
          return; // the server closed its port: the stop is under way
        }
        if (res.status !== 200) return;
        (res.body.offsets as { partition: number; offset: number }[]).forEach((o, i) =>
          records.push({ key: keys[i]!, partition: o.partition, offset: o.offset }),
        );
      }
    };
    const starter = async () => {
      while (!stopped) {
        let res;
        try {
          res = await call(automation, token, 'POST', '/api/v1/runs', {
            target: 'agents.echo-agent',
            input: { text: 'stop under load' },
          });
        } catch {
          return;
        }
        if (res.status !== 201) return;
        runs.push(res.body.id as string);
      }
    };
    const load = Promise.all([producer(0), producer(1), producer(2), starter(), starter()]);
    await waitUntil('some records and runs acknowledged', () => records.length >= 40 && runs.length >= 4);
    proc.signalGroup('SIGTERM');
    await expectCleanExit(proc, 'stop under load');
    stopped = true;
    await load;

    // The restart: same data directory, every service answers, nothing acknowledged is missing.
    const restartPorts = await freeSluicePorts();
    proc = new SluiceProcess({ transport, dataDir, ports: restartPorts, env });
    await proc.waitForLine(/^\s+console\s+http/);
    assert.doesNotMatch(proc.stdout, /First start/, 'the key of the first start is kept');
    const health = await fetch(`http://127.0.0.1:${restartPorts.PORT}/healthcheck`);
    assert.equal(health.status, 200);
    const byPartition = new Map<number, Map<number, string>>();
    for (const partition of [0, 1]) {
      const stored = new Map<number, string>();
      for (let offset = 0; ;) {
        const page = await call(
          restartPorts.STREAMS_PORT,
          token,
          'GET',
          `/streams/topics/load/partitions/${partition}/records?offset=${offset}&count=1000`,
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        const rows = page.body as { offset: number; key: string }[];
        if (rows.length === 0) break;
        for (const row of rows) stored.set(row.offset, row.key);
        offset = rows[rows.length - 1]!.offset + 1;
      }
      byPartition.set(partition, stored);
    }
    for (const record of records)
      assert.equal(
        byPartition.get(record.partition)?.get(record.offset),
        record.key,
        `acknowledged record ${record.key} at ${record.partition}/${record.offset}`,
      );
    for (const id of runs) {
      const run = await call(restartPorts.AUTOMATION_PORT, token, 'GET', `/api/v1/runs/${id}`);
      assert.equal(run.status, 200, `acknowledged run ${id}: ${JSON.stringify(run.body)}`);
      assert.equal(run.body.id, id);
    }
    const check = await call(restartPorts.AUTOMATION_PORT, token, 'GET', '/api/v1/auth/check');
    assert.equal(check.status, 200);

    proc.signalGroup('SIGTERM');
    await expectCleanExit(proc, 'stop after the restart');
  });
});
