// gRPC load with h2load (Debian package nghttp2-client), when it is on PATH. h2load speaks
// plain HTTP/2: the request file is one gRPC frame (0x00 + u32be length + protobuf) and the
// gRPC headers are added by hand. It counts HTTP statuses only, so the runner checks the
// call's grpc-status once with a real client before the load; h2load reports mean and max
// latency but no percentiles.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from './run-tool.js';
import type { LoadOptions, LoadResult } from './types.js';

function toMs(value: string, unit: string): number {
  const n = Number(value);
  if (unit === 'us') return n / 1000;
  if (unit === 's') return n * 1000;
  return n;
}

export function parseH2load(output: string): {
  rps: number;
  requests: number;
  failed: number;
  non2xx: number;
  meanMs?: number;
  maxMs?: number;
} {
  const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(output);
  const requests =
    /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
      output,
    );
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(output);
  if (!finished || !requests) throw new Error(`cannot read h2load output:\n${output}`);
  const time = /time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)/.exec(output);
  const result: ReturnType<typeof parseH2load> = {
    rps: Number(finished[2]),
    requests: Number(requests[2]),
    failed: Number(requests[4]) + Number(requests[5]) + Number(requests[6]),
    non2xx: codes ? Number(codes[2]) + Number(codes[3]) + Number(codes[4]) : 0,
  };
  if (time) {
    result.maxMs = toMs(time[3]!, time[4]!);
    result.meanMs = toMs(time[5]!, time[6]!);
  }
  return result;
}

export async function runH2load(
  binary: string,
  address: string,
  path: string,
  frame: Buffer,
  options: LoadOptions,
): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-h2load-'));
  try {
    const file = join(dir, 'request.bin');
    writeFileSync(file, frame);
    const threads = Math.max(1, Math.min(options.threads, options.connections));
    const streams = Math.max(1, options.pipelining);
    const warmUp = options.durationS >= 4 ? 1 : 0;
    const args = [
      `-t${threads}`,
      `-c${options.connections}`,
      `-m${streams}`,
      '-D',
      String(options.durationS),
      ...(warmUp ? [`--warm-up-time=${warmUp}`] : []),
      '-H',
      'content-type: application/grpc',
      '-H',
      'te: trailers',
      '-d',
      file,
      `http://${address}${path}`,
    ];
    const ran = await runTool(binary, args, options.durationS);
    const output = ran.out + ran.err;
    const f = parseH2load(output);
    const result: LoadResult = {
      client: 'h2load',
      settings: `-t${threads} -c${options.connections} -m${streams} -D ${options.durationS}`,
      requests: f.requests,
      rps: f.rps,
      failures: f.failed + f.non2xx,
      notes: 'h2load: no percentiles (mean/max only); grpc-status checked once before the load',
    };
    if (f.meanMs !== undefined) result.meanMs = f.meanMs;
    if (f.maxMs !== undefined) result.maxMs = f.maxMs;
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
