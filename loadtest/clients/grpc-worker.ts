// One grpc-js load-generator process: `channels` connections with `inflight` calls each kept
// in flight (closed loop) until the deadline. Prints one JSON line with its counts and latency
// histogram. Started by clients/grpc-js.ts; several of these run at once because one grpc-js
// client process saturates at about a third of a grpc-js server's rate.

import {
  createUnaryClient,
  loadProto,
  serviceDefinition,
  type UnaryClient,
} from '../../src/core/grpc/index.js';
import { record, type Histogram } from './histogram.js';

export interface WorkerConfig {
  address: string;
  protoFiles: string[];
  service: string;
  method: string;
  request: object;
  channels: number;
  inflight: number;
  durationMs: number;
  warmupMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const definition = serviceDefinition(loadProto(config.protoFiles), config.service);
const clients: UnaryClient<object, unknown>[] = [];
for (let i = 0; i < config.channels; i++) {
  // A private subchannel pool per client gives each its own TCP connection.
  clients.push(
    createUnaryClient(config.address, definition, config.method, {
      channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
    }),
  );
}
await Promise.all(clients.map((c) => c.waitForReady(10_000)));

const hist: Histogram = {};
let count = 0;
let failures = 0;
const start = performance.now();
const measureFrom = start + config.warmupMs;
const end = measureFrom + config.durationMs;

async function loop(client: UnaryClient<object, unknown>): Promise<void> {
  for (;;) {
    const t0 = performance.now();
    if (t0 >= end) return;
    let ok = true;
    try {
      await client.call(config.request, { timeoutMs: 10_000 });
    } catch {
      ok = false;
    }
    const t1 = performance.now();
    if (t0 >= measureFrom && t1 <= end) {
      if (ok) {
        count++;
        record(hist, (t1 - t0) * 1000);
      } else failures++;
    }
  }
}

await Promise.all(clients.flatMap((c) => Array.from({ length: config.inflight }, () => loop(c))));
for (const c of clients) c.close();
process.stdout.write(JSON.stringify({ count, failures, elapsedMs: config.durationMs, hist }) + '\n');
process.exit(0);
