// The retention pass as the service runs it: what it logs per trimmed partition and the counters
// it keeps for /metrics, on a real LMDB log; a pass that fails (the environment closed under it)
// is counted as an error and logged, and does not throw.

import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../src/core/log.js';
import { LmdbTopicLog } from '../../src/streams/log/lmdb.js';
import { RetentionRunner, retentionStats } from '../../src/streams/retention.js';
import { openStreamsEnvironment } from '../../src/streams/storage.js';
import { waitUntil } from '../helpers/wait.js';

/** Collects what the runner logs (the service's logger is pino; only info and warn are used). */
function capture(): { log: Logger; lines: Array<{ level: string; fields: any; message: string }> } {
  const lines: Array<{ level: string; fields: any; message: string }> = [];
  const at = (level: string) => (fields: unknown, message: string) => lines.push({ level, fields, message });
  return { log: { info: at('info'), warn: at('warn') } as unknown as Logger, lines };
}

test('a pass logs each trimmed partition and counts records, bytes, passes and errors', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-retention-'));
  const root = openStreamsEnvironment(dir);
  try {
    const log = new LmdbTopicLog(root);
    let now = Date.now();
    const { log: logger, lines } = capture();
    const runner = new RetentionRunner(log, { intervalMs: 10, now: () => now, log: logger });
    const topic = await log.createTopic('aged', 1, { retentionMs: 1000, retentionBytes: -1 });
    const rec = (i: number) => ({
      partition: 0,
      key: null,
      valueJson: JSON.stringify({ i }),
      timestamp: now,
      headers: null,
    });
    await log.append(topic, [rec(0), rec(1)]);
    await log.append(topic, [rec(2)]);
    const before = retentionStats();
    assert.deepEqual(await runner.pass(), []);
    now += 5000;
    const removed = await runner.pass();
    assert.deepEqual(
      removed.map((r) => [r.topic, r.partition, r.records, r.beginning]),
      [['aged', 0, 2, 2]],
    );
    const after = retentionStats();
    assert.equal(after.removedRecords - before.removedRecords, 2);
    assert.equal(after.removedBytes - before.removedBytes, removed[0]!.bytes);
    assert.equal(after.passes - before.passes, 2);
    assert.equal(after.lastPassAt, now);
    const info = lines.filter((l) => l.level === 'info');
    assert.equal(info.length, 1);
    assert.equal(info[0]!.message, 'retention removed old records');
    assert.deepEqual(info[0]!.fields, {
      topic: 'aged',
      partition: 0,
      records: 2,
      bytes: removed[0]!.bytes,
      beginning_offset: 2,
    });

    // The timer runs passes by itself.
    runner.start();
    await waitUntil('passes on the timer', () => retentionStats().passes >= after.passes + 2);
    await runner.stop();

    // A fault: the environment closed under the log. The pass reports it and does not throw.
    await log.append(topic, [rec(3)]);
    now += 5000;
    await root.close();
    assert.deepEqual(await runner.pass(), []);
    assert.equal(retentionStats().errors - after.errors, 1);
    assert.equal(lines.filter((l) => l.level === 'warn').length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
