// Shared set-up for the JetStream produce scenarios: a 3-node nats-server cluster with JetStream
// (test/helpers/nats.ts: free loopback ports, stores in temp directories) started once per run
// when the scenario module loads, killed by pid when the run's process exits. Its URLs go to the
// ceiling (jetstream-publish, through the inherited environment) and to the Sluice server; the
// topic is created in the cluster before the server starts, with the service's own log code.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { JetStreamTopicLog } from '../../../src/streams/log/jetstream.js';
import { startNatsCluster, type NatsCluster } from '../../../test/helpers/nats.js';
import type { Scenario } from '../../types.js';
import { PARTITIONS, TOKEN, TOPIC, valueOfSize } from './setup.js';

let cluster: NatsCluster | undefined;

async function natsForRun(replicas: number): Promise<string[]> {
  if (!cluster) {
    const started = await startNatsCluster(3);
    cluster = started;
    process.once('exit', () => {
      // Synchronous: the run ends with process.exit.
      for (const node of started.nodes) {
        const pid = node.pid();
        if (pid !== undefined && node.running()) process.kill(pid, 'SIGKILL');
      }
      rmSync(dirname(started.nodes[0]!.dir), { recursive: true, force: true });
    });
    process.env['LOADTEST_NATS_URLS'] = started.urls.join(',');
    process.env['LOADTEST_NATS_REPLICAS'] = String(replicas);
  }
  return cluster.urls;
}

export async function jetstreamProduceScenario(
  records: number,
  valueBytes: number,
  replicas: number,
): Promise<Scenario> {
  const urls = await natsForRun(replicas);
  const prefix = `load${process.pid}`;
  const body = {
    records: Array.from({ length: records }, (_, i) => ({ value: valueOfSize(valueBytes, i) })),
  };
  return {
    description: `durable produce on NATS JetStream (3-node cluster, R${replicas}): ${records} record${records === 1 ? '' : 's'} of ~${valueBytes} B JSON per request to a ${PARTITIONS}-partition topic (unkeyed); records/s = req/s × ${records}. Ceiling: ${process.env['LOADTEST_JS_CEILING'] === 'batch' ? "each request's values published as one JetStream message" : 'the same records published one JetStream message each'} from the NATS client, async, acknowledged before the answer`,
    ceiling: 'jetstream-publish',
    load: {
      kind: 'http',
      method: 'POST',
      path: `/streams/topic/${TOPIC}`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/vnd.streams.json.v2+json' },
      body,
      okStatus: [200],
    },
    server: {
      args: ['streams'],
      env: {
        SLUICE_ADMIN_TOKEN: TOKEN,
        SLUICE_THREADS: '1',
        STREAMS_HOST: '127.0.0.1',
        STREAMS_BACKEND: 'jetstream',
        STREAMS_NATS_SERVERS: urls.join(','),
        STREAMS_REPLICAS: String(replicas),
        STREAMS_NATS_PREFIX: prefix,
        // 100 connections queue behind one another on a partition; give them room.
        STREAMS_NATS_TIMEOUT: '30s',
      },
      portEnv: ['STREAMS_PORT'],
      target: 'STREAMS_PORT',
      prepare: async () => {
        const log = await JetStreamTopicLog.open({
          servers: urls,
          user: undefined,
          password: undefined,
          token: undefined,
          credsFile: undefined,
          tls: undefined,
          replicas,
          prefix,
          timeoutMs: 30_000,
        });
        try {
          if (!log.topic(TOPIC)) await log.createTopic(TOPIC, PARTITIONS);
        } finally {
          await log.close();
        }
        return {};
      },
    },
  };
}
