// The TopicLog contract on LMDB (the default backend), in a temp directory.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StreamsError } from '../../src/streams/errors.js';
import { LmdbTopicLog } from '../../src/streams/log/lmdb.js';
import { KEEP_EVERYTHING, type TopicLog } from '../../src/streams/log/types.js';
import { openStreamsEnvironment } from '../../src/streams/storage.js';
import { runTopicLogContract } from './log-contract.js';

runTopicLogContract('lmdb', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-log-lmdb-'));
  return {
    async open(): Promise<TopicLog> {
      const root = openStreamsEnvironment(dir);
      const log = new LmdbTopicLog(root);
      const close = log.close.bind(log);
      // The log and its environment close together, as the service does.
      log.close = async () => {
        await close();
        await root.close();
      };
      return log;
    },
    async destroy() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The service closes the log, then its environment. lmdb-js would still queue a write on the
// log's sub-database meanwhile, and the queued commit would then fail outside any caller (an
// uncaught "The environment is already closed" that ends the thread): every write is refused
// from the log's close on, with a 503 the HTTP layer answers.
describe('LMDB topic log: writes once its close began', () => {
  it('are refused with a 503 and never reach the closing environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-log-lmdb-'));
    try {
      const root = openStreamsEnvironment(dir);
      const log = new LmdbTopicLog(root);
      const topic = await log.createTopic('closing', 1);
      const record = { partition: 0, key: null, valueJson: '{}', timestamp: 1, headers: null };
      assert.deepEqual(await log.append(topic, [record]), [0]);
      await log.close();
      const rootClosed = root.close();
      const refused = (error: unknown) => error instanceof StreamsError && error.status === 503;
      await assert.rejects(log.append(topic, [record]), refused);
      await assert.rejects(log.createTopic('late', 1), refused);
      await assert.rejects(log.updateTopic('closing', KEEP_EVERYTHING), refused);
      await assert.rejects(log.deleteTopic('closing'), refused);
      await rootClosed;
      // A queued write would fail on the turn after the close.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
