// The TopicLog contract on LMDB (the default backend), in a temp directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbTopicLog } from '../../src/streams/log/lmdb.js';
import type { TopicLog } from '../../src/streams/log/types.js';
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
