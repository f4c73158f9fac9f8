// The fuzz run: discover routes, make seeds, send `requests` cases with a few in flight, judge
// each answer, then check every service's health route. Bounded in count and in time (the run
// stops at `maxSeconds` even when cases are left). Only loopback addresses are accepted.

import { makeCase, type CaseContext, type Endpoint, type FuzzCase } from './cases.js';
import { excerpt, judge, type FailureKind } from './oracle.js';
import {
  automationRoutes,
  ratelimitRoutes,
  streamsRoutes,
  type FuzzRoute,
  type Json,
  type ServiceName,
} from './routes.js';
import { automationSeeds, emptySeeds, ratelimitSeeds, streamsSeeds } from './seeds.js';
import { Sender, serialise, type Outcome } from './send.js';

export interface FuzzOptions {
  requests: number;
  seed: number;
  /** Base URLs (no /api/v1), loopback only; a service without a URL is not fuzzed. */
  urls: Partial<Record<ServiceName, string>>;
  token: string;
  concurrency?: number;
  /** Per request; a case without an answer by then is a `timeout` failure. */
  timeoutMs?: number;
  /** Whole run; cases left when it passes are not sent (the report says so). */
  maxSeconds?: number;
  /** A domain of the loaded rate limit configuration. */
  ratelimitDomain?: string;
  /** Bodies of up to 17 MiB allowed in the run (default 6). */
  bigBodies?: number;
  /** Send only these case indexes (replay). */
  only?: readonly number[];
  progress?: (line: string) => void;
  /** Called with every case and its answer (replays print them in full). */
  onCase?: (c: FuzzCase, outcome: Outcome) => void;
}

export interface FailureGroup {
  kind: FailureKind | 'unhealthy';
  service: ServiceName;
  route: string;
  status: number | undefined;
  count: number;
  /** The first case that failed this way. */
  example: { index: number; method: string; target: string; notes: readonly string[]; detail: string };
}

export interface FuzzReport {
  seed: number;
  planned: number;
  sent: number;
  seconds: number;
  routes: Record<ServiceName, number>;
  counts: Record<string, Record<string, number>>;
  failures: FailureGroup[];
  /** The slowest answers (route, case, milliseconds), to see where a run spends its time. */
  slowest: { ms: number; index: number; route: string }[];
}

const HEALTH: Record<ServiceName, { path: string; auth: boolean }> = {
  ratelimit: { path: '/healthcheck', auth: false },
  streams: { path: '/streams/topics', auth: true },
  automation: { path: '/api/v1/auth/check', auth: true },
};

export function endpointOf(url: string): Endpoint {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!['127.0.0.1', 'localhost', '::1'].includes(host) && !host.startsWith('127.'))
    throw new Error(`the fuzzer only talks to loopback addresses, not ${u.hostname}`);
  return { host: host === 'localhost' ? '127.0.0.1' : host, port: Number(u.port || 80) };
}

export async function checkHealth(
  urls: Partial<Record<ServiceName, string>>,
  token: string,
): Promise<string[]> {
  const problems: string[] = [];
  for (const [service, url] of Object.entries(urls) as [ServiceName, string][]) {
    const probe = HEALTH[service];
    try {
      const res = await fetch(url + probe.path, {
        headers: probe.auth ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (res.status !== 200) problems.push(`${service}: GET ${probe.path} answered ${res.status}`);
    } catch (error) {
      problems.push(`${service}: GET ${probe.path} failed: ${(error as Error).message}`);
    }
  }
  return problems;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const concurrency = options.concurrency ?? 8;
  const maxMs = (options.maxSeconds ?? 600) * 1000;
  const endpoints: Partial<Record<ServiceName, Endpoint>> = {};
  for (const [service, url] of Object.entries(options.urls) as [ServiceName, string][])
    endpoints[service] = endpointOf(url);

  const before = await checkHealth(options.urls, options.token);
  if (before.length > 0) throw new Error(`not healthy before fuzzing: ${before.join('; ')}`);

  const routes: FuzzRoute[] = [];
  let components: Record<string, Json> = {};
  const seeds = emptySeeds();
  const tag = String(options.seed);
  if (options.urls.ratelimit) {
    routes.push(...ratelimitRoutes());
    ratelimitSeeds(seeds, options.ratelimitDomain ?? 'fuzz');
  }
  if (options.urls.streams) {
    routes.push(...streamsRoutes());
    await streamsSeeds(seeds, { url: options.urls.streams, token: options.token }, tag);
  }
  if (options.urls.automation) {
    const table = await automationRoutes(options.urls.automation);
    routes.push(...table.routes);
    components = table.components;
    await automationSeeds(seeds, { url: options.urls.automation, token: options.token });
  }
  if (routes.length === 0) throw new Error('no service to fuzz: give at least one URL');

  const ctx: CaseContext = {
    seed: options.seed,
    token: options.token,
    endpoints,
    routes,
    components,
    seeds,
    bigBodies: { left: options.bigBodies ?? 6, used: 0 },
  };
  const report: FuzzReport = {
    seed: options.seed,
    planned: options.only?.length ?? options.requests,
    sent: 0,
    seconds: 0,
    routes: { ratelimit: 0, streams: 0, automation: 0 },
    counts: {},
    failures: [],
    slowest: [],
  };
  for (const r of routes) report.routes[r.service]++;
  const groups = new Map<string, FailureGroup>();
  const record = (
    c: FuzzCase | undefined,
    service: ServiceName,
    route: string,
    kind: FailureGroup['kind'],
    status: number | undefined,
    detail: string,
  ) => {
    const key = `${kind} ${service} ${route} ${status ?? ''}`;
    const group = groups.get(key);
    if (group) group.count++;
    else
      groups.set(key, {
        kind,
        service,
        route,
        status,
        count: 1,
        example: {
          index: c?.index ?? -1,
          method: c?.wire.method ?? 'GET',
          target: shorten(c?.wire.target ?? ''),
          notes: c?.notes ?? [],
          detail,
        },
      });
  };

  // Cases are made in index order as workers take them (one event loop, so no race): the
  // big-body budget then runs out at the same index every time, and a replay (`only`) makes
  // the cases before it too, so it regenerates exactly the same request.
  const only = options.only ? new Set(options.only) : undefined;
  const total = only ? Math.max(-1, ...only) + 1 : options.requests;
  const sender = new Sender(options.timeoutMs ?? 30_000);
  let next = 0;
  let lastProgress = Date.now();
  const worker = async () => {
    while (next < total && Date.now() - started < maxMs) {
      const index = next++;
      const c = makeCase(ctx, index);
      if (only && !only.has(index)) continue;
      const t0 = Date.now();
      const outcome: Outcome =
        c.raw || c.malformed
          ? await sender.raw(c.wire.host, c.wire.port, c.raw ?? serialise(c.wire), c.malformed)
          : await sender.send(c.wire);
      report.sent++;
      report.slowest.push({ ms: Date.now() - t0, index: c.index, route: `${c.service} ${c.route}` });
      if (report.slowest.length > 20) report.slowest = report.slowest.sort((a, b) => b.ms - a.ms).slice(0, 5);
      options.onCase?.(c, outcome);
      const verdict = judge(c.wire.method, outcome, c.malformed, overLimit(c));
      const counts = (report.counts[c.service] ??= {});
      counts[verdict.bucket] = (counts[verdict.bucket] ?? 0) + 1;
      // A body on HEAD answers comes from the HTTP core, whatever the route: one group per service.
      if (!verdict.ok)
        record(
          c,
          c.service,
          verdict.failure === 'head-with-body' ? 'HEAD (any route)' : c.route,
          verdict.failure,
          verdict.failure === 'head-with-body' ? undefined : outcome.status,
          verdict.detail,
        );
      if (options.progress && Date.now() - lastProgress > 5000) {
        lastProgress = Date.now();
        options.progress(`${report.sent}/${report.planned} sent, ${groups.size} distinct failures`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));

  for (const problem of await checkHealth(options.urls, options.token)) {
    const service = problem.split(':')[0] as ServiceName;
    record(undefined, service, `GET ${HEALTH[service].path}`, 'unhealthy', undefined, problem);
  }
  report.failures = [...groups.values()];
  report.slowest = report.slowest.sort((a, b) => b.ms - a.ms).slice(0, 5);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

function shorten(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}

export function formatReport(report: FuzzReport): string {
  const lines: string[] = [];
  lines.push(
    `fuzz: seed ${report.seed}, ${report.sent} of ${report.planned} requests in ${report.seconds.toFixed(1)} s` +
      (report.sent < report.planned ? ' (stopped by the time limit)' : ''),
  );
  for (const [service, n] of Object.entries(report.routes)) {
    if (n === 0) continue;
    const counts = report.counts[service] ?? {};
    const cells = Object.keys(counts)
      .sort()
      .map((k) => `${k} ${counts[k]}`)
      .join(', ');
    lines.push(`  ${service.padEnd(10)} ${n} routes: ${cells}`);
  }
  lines.push(`  slowest: ${report.slowest.map((s) => `${s.ms} ms case ${s.index} ${s.route}`).join('; ')}`);
  if (report.failures.length === 0) lines.push('  no failures');
  else lines.push(`  ${report.failures.length} distinct failures:`);
  for (const f of report.failures) {
    lines.push(`  - ${f.kind}${f.status ? ` ${f.status}` : ''} on ${f.service} ${f.route} (${f.count}×)`);
    lines.push(`      case ${f.example.index}: ${f.example.method} ${f.example.target}`);
    if (f.example.notes.length > 0) lines.push(`      mutations: ${f.example.notes.join('; ')}`);
    lines.push(`      answer: ${f.example.detail}`);
  }
  return lines.join('\n');
}

export { excerpt };

/**
 * The smallest default body limit among each service's routes (docs/limits.md): a body past it
 * may be refused with 413 and a close before it is read.
 */
const BODY_LIMIT_FLOOR: Record<string, number> = {
  ratelimit: 64 * 1024,
  streams: 16 * 1024 * 1024,
  automation: 2 * 1024 * 1024,
};

function overLimit(c: { service: string; wire: { body?: Buffer } }): boolean {
  return (c.wire.body?.length ?? 0) > (BODY_LIMIT_FLOOR[c.service] ?? Infinity);
}
