// Shared set-up for the streams scenarios (this folder is not itself a scenario: the runner
// lists only *.ts files directly under scenarios/). The topic, and for consume the records,
// are written into the server's data directory before it starts, with the service's own log
// code, so the load measures only the endpoint under test.

import { join } from 'node:path';
import { LmdbTopicLog } from '../../../src/streams/log/lmdb.js';
import type { AppendRecord } from '../../../src/streams/log/types.js';
import { openStreamsEnvironment } from '../../../src/streams/storage.js';
import type { Scenario, ServerSpec } from '../../types.js';

export const TOKEN = 'loadtest-streams-admin-token';
export const TOPIC = 'load';
export const PARTITIONS = 4;

/** A JSON object value whose JSON text is `bytes` long (± a few). */
export function valueOfSize(bytes: number, i = 0): Record<string, unknown> {
  const base = JSON.stringify({ id: i, pad: '' }).length;
  return { id: i, pad: 'x'.repeat(Math.max(0, bytes - base)) };
}

async function prepareTopic(
  tmp: string,
  preload: number,
  valueBytes: number,
): Promise<Record<string, string>> {
  const dataDir = join(tmp, 'data');
  const root = openStreamsEnvironment(join(dataDir, 'streams'));
  try {
    const log = new LmdbTopicLog(root);
    const topic = await log.createTopic(TOPIC, PARTITIONS);
    for (let done = 0; done < preload;) {
      const n = Math.min(1000, preload - done);
      const batch: AppendRecord[] = Array.from({ length: n }, (_, i) => ({
        partition: 0,
        key: null,
        valueJson: JSON.stringify(valueOfSize(valueBytes, done + i)),
        timestamp: Date.now(),
        headers: null,
      }));
      await log.append(topic, batch);
      done += n;
    }
    await log.close();
  } finally {
    await root.close();
  }
  return { SLUICE_DATA_DIR: dataDir };
}

export function streamsServer(preload = 0, valueBytes = 100): ServerSpec {
  return {
    args: ['streams'],
    env: { SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_THREADS: '1', STREAMS_HOST: '127.0.0.1' },
    portEnv: ['STREAMS_PORT'],
    target: 'STREAMS_PORT',
    prepare: (tmp) => prepareTopic(tmp, preload, valueBytes),
  };
}

export function produceScenario(records: number, valueBytes: number): Scenario {
  const body = {
    records: Array.from({ length: records }, (_, i) => ({ value: valueOfSize(valueBytes, i) })),
  };
  return {
    description: `durable produce: ${records} record${records === 1 ? '' : 's'} of ~${valueBytes} B JSON per request to a ${PARTITIONS}-partition topic (unkeyed); records/s = req/s × ${records}`,
    ceiling: 'uws-echo',
    load: {
      kind: 'http',
      method: 'POST',
      path: `/streams/topic/${TOPIC}`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/vnd.streams.json.v2+json' },
      body,
      okStatus: [200],
    },
    server: streamsServer(),
  };
}
