// HTTP load with autocannon's programmatic API (the design card's tool). Worker threads are
// used when more than one client thread is asked for: one autocannon thread saturates near
// 60k req/s on this class of machine, below a uWS server's ceiling.

import { createRequire } from 'node:module';
import type { Options, Result } from 'autocannon';
import { isOk, type ResolvedHttpLoad } from './http-body.js';
import type { LoadOptions, LoadResult } from './types.js';

const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Options,
) => Promise<Result> & { stop?: () => void };

/** Responses outside the load's accepted statuses (autocannon itself only knows 2xx / non-2xx). */
function notOk(result: Result, load: ResolvedHttpLoad): number {
  const stats = result.statusCodeStats;
  if (!load.okStatus || !stats) return result.non2xx;
  let bad = 0;
  for (const [code, entry] of Object.entries(stats)) if (!isOk(load, Number(code))) bad += entry.count ?? 0;
  return bad;
}

export async function runAutocannon(
  baseUrl: string,
  load: ResolvedHttpLoad,
  options: LoadOptions,
): Promise<LoadResult> {
  const opts: Options = {
    url: baseUrl + load.path,
    method: load.method as Options['method'],
    headers: load.headers,
    connections: options.connections,
    pipelining: options.pipelining,
    duration: options.durationS,
  };
  if (load.body !== undefined) opts.body = load.body;
  if (options.threads > 1) opts.workers = options.threads;
  const result = await autocannon(opts);
  const seconds = Math.max(0.001, (result.finish.getTime() - result.start.getTime()) / 1000);
  const total = result.requests.total;
  return {
    client: 'autocannon',
    settings: `-c ${options.connections} -p ${options.pipelining}${options.threads > 1 ? ` -w ${options.threads}` : ''} -d ${options.durationS}`,
    requests: total,
    rps: total / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.average,
    maxMs: result.latency.max,
    failures: notOk(result, load) + result.errors,
  };
}
