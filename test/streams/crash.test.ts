import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openStreamsEnvironment } from '../../src/streams/storage.js';
import { LmdbTopicLog } from '../../src/streams/log/lmdb.js';
import { waitUntil } from '../helpers/wait.js';

interface Ack {
  id: string;
  partition: number;
  offset: number;
}

test('a server killed with SIGKILL during produce load loses no acknowledged record', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-crash-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/streams/crash-child.ts'], {
    env: { ...process.env, CRASH_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  try {
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', () => reject(new Error('child exited before listening')));
    });
    const { url, token } = JSON.parse(first) as { url: string; token: string };
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/vnd.streams.json.v2+json',
    };
    const created = await fetch(`${url}/streams/topics/topic`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ topic_name: 'crash', partitions: 3 }),
    });
    assert.equal(created.status, 200);

    const acked: Ack[] = [];
    let stop = false;
    let failures = 0;
    const producer = async (p: number): Promise<void> => {
      for (let batch = 0; !stop; batch++) {
        const ids = Array.from({ length: 10 }, (_, i) => `${p}-${batch}-${i}`);
        try {
          const reply = await fetch(`${url}/streams/topic/crash`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ records: ids.map((id) => ({ key: id, value: { id } })) }),
          });
          if (reply.status !== 200) {
            failures++;
            continue;
          }
          const { offsets } = (await reply.json()) as {
            offsets: Array<{ partition: number; offset: number }>;
          };
          offsets.forEach((o, i) => acked.push({ id: ids[i]!, ...o }));
        } catch {
          return; // the server is gone
        }
      }
    };
    const producers = Array.from({ length: 10 }, (_, p) => producer(p));
    await waitUntil('1500 acknowledged records', () => acked.length >= 1500, { intervalMs: 10 });
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    stop = true;
    await Promise.all(producers);
    assert.equal(failures, 0, 'no produce failed before the kill');

    // Reopen the store the dead process wrote, as the next start would.
    const root = openStreamsEnvironment(join(dataDir, 'streams'));
    try {
      const log = new LmdbTopicLog(root);
      const topic = log.topic('crash')!;
      assert.ok(topic, 'the topic survived');
      const stored = new Map<string, string>();
      for (let p = 0; p < topic.partitions; p++) {
        const end = await log.endOffset(topic, p);
        const records = await log.read(topic, p, 0, {
          maxRecords: Number.MAX_SAFE_INTEGER,
          maxBytes: Number.MAX_SAFE_INTEGER,
          atLeastOne: true,
        });
        assert.deepEqual(
          records.map((r) => r.offset),
          Array.from({ length: end }, (_, i) => i),
          `partition ${p} is contiguous from 0`,
        );
        for (const r of records)
          stored.set(`${p}/${r.offset}`, (JSON.parse(r.value.toString('utf8')) as { id: string }).id);
      }
      for (const ack of acked) {
        assert.equal(
          stored.get(`${ack.partition}/${ack.offset}`),
          ack.id,
          `acknowledged ${ack.id} at ${ack.partition}/${ack.offset}`,
        );
      }
      // Offsets continue without gaps or reuse.
      const end0 = await log.endOffset(topic, 0);
      const [next] = await log.append(topic, [
        { partition: 0, key: null, valueJson: '{}', timestamp: Date.now(), headers: null },
      ]);
      assert.equal(next, end0);
      await log.close();
    } finally {
      await root.close();
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
