// gRPC load from K grpc-js processes (clients/grpc-worker.ts), for machines without h2load.
// Connections and in-flight calls are split across the processes; counts and histograms are
// added up.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../process.js';
import type { GrpcLoad } from '../types.js';
import { merge, summarise, type Histogram } from './histogram.js';
import type { LoadOptions, LoadResult } from './types.js';
import type { WorkerConfig } from './grpc-worker.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

export async function runGrpcJs(
  address: string,
  load: GrpcLoad,
  options: LoadOptions,
  processes: number,
): Promise<LoadResult> {
  const procs = Math.max(1, Math.min(processes, options.connections));
  const warmupMs = options.durationS >= 4 ? 1000 : 0;
  const inflight = Math.max(1, options.pipelining);
  const workers = Array.from({ length: procs }, (_, i) => {
    const channels = Math.floor(options.connections / procs) + (i < options.connections % procs ? 1 : 0);
    const config: WorkerConfig = {
      address,
      protoFiles: load.protoFiles,
      service: load.service,
      method: load.method,
      request: load.request,
      channels,
      inflight,
      durationMs: options.durationS * 1000,
      warmupMs,
    };
    return startChild({
      name: `grpc-js generator ${i + 1}/${procs}`,
      command: process.execPath,
      args: ['--import', 'tsx', join(here, 'grpc-worker.ts'), JSON.stringify(config)],
      env: { ...process.env, LOG_LEVEL: 'warn' },
      cwd: root,
    });
  });
  const hist: Histogram = {};
  let count = 0;
  let failures = 0;
  try {
    const outputs = await Promise.all(
      workers.map(async (w) => {
        const killer = setTimeout(() => void w.stop(100), (options.durationS + 30) * 1000);
        try {
          for await (const line of w.stdoutLines) {
            if (line.startsWith('{'))
              return JSON.parse(line) as { count: number; failures: number; hist: Histogram };
          }
          throw new Error(`${w.name} printed no result\n${w.stderrTail()}`);
        } finally {
          clearTimeout(killer);
        }
      }),
    );
    for (const o of outputs) {
      count += o.count;
      failures += o.failures;
      merge(hist, o.hist);
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop(1000)));
  }
  const s = summarise(hist);
  return {
    client: 'grpc-js',
    settings: `${procs} processes, ${options.connections} channels × ${inflight} in flight, ${options.durationS}s`,
    requests: count,
    rps: count / options.durationS,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    meanMs: s.meanMs,
    maxMs: s.maxMs,
    failures,
    notes: 'closed-loop grpc-js generator; latencies from 2 % buckets',
  };
}
