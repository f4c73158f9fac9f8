// The debug server (thread 0): `/` lists the endpoints, `/rlconfig` dumps the loaded rules,
// `/stats` prints every counter as `name: value` lines, `/debug/pprof/*` profiles this thread.
// No authentication, like upstream; unlike upstream it listens on loopback by default and takes
// heap snapshots and CPU profiles only with DEBUG_PROFILING_ENABLED=true, because a heap
// snapshot of this process contains every secret it holds (API keys, admin token, store
// passwords under `sluice serve`).

import type { Logger } from '../../core/log.js';
import {
  contentDisposition,
  HttpError,
  Router,
  startHttpServer,
  type HttpServerHandle,
} from '../../core/http/index.js';
import type { HttpTransportSetting } from '../../core/settings/index.js';
import type { RuleSet } from '../config/rules.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { errorBody } from './http.js';
import { cpuProfile, heapSnapshot, ProfilerBusyError } from './profiler.js';

export interface DebugSources {
  rules: () => RuleSet | undefined;
  stats: SharedStatsTable;
  /** Extra gauges (store occupancy …) printed after the counters. */
  gauges: () => Record<string, number | string>;
}

const ENDPOINTS: Record<string, string> = {
  '/debug/pprof/': 'root of various pprof endpoints. hit for help.',
  '/debug/pprof/profile':
    'CPU profile of the thread serving the debug port (?seconds=N, default 30, max 300); a .cpuprofile for Chrome DevTools',
  '/debug/pprof/heap': 'heap snapshot of that thread; a .heapsnapshot for Chrome DevTools',
  '/rlconfig': 'print out the currently loaded configuration for debugging',
  '/stats': 'print out stats',
};

/** The refusal while profiling is off; names the setting so an operator knows what to change. */
function profilingOff(): HttpError {
  return new HttpError(
    403,
    'profiling_disabled',
    'heap snapshots and CPU profiles are disabled; set DEBUG_PROFILING_ENABLED=true to enable them',
  );
}

export function debugRouter(sources: DebugSources, options: { profiling: boolean }): Router {
  const router = new Router();
  const text = 'text/plain; charset=utf-8';
  router.get(
    '/',
    (_req, res) => {
      const lines = Object.keys(ENDPOINTS)
        .sort()
        .map((path) => `${path}: ${ENDPOINTS[path]}\n`);
      res.header('content-type', text).send(lines.join(''));
    },
    { scope: false },
  );
  router.get('/rlconfig', (_req, res) => res.header('content-type', text).send(sources.rules()?.dump ?? ''), {
    scope: false,
  });
  router.get(
    '/stats',
    (_req, res) => {
      let out = '';
      for (const [name, value] of sources.stats.snapshot()) out += `${name}: ${value}\n`;
      for (const [name, value] of Object.entries(sources.gauges())) out += `${name}: ${value}\n`;
      res.header('content-type', text).send(out);
    },
    { scope: false },
  );
  router.get(
    '/debug/pprof/',
    (_req, res) => {
      const off = options.profiling ? '' : ' (disabled; set DEBUG_PROFILING_ENABLED=true)';
      res
        .header('content-type', text)
        .send(`profile: CPU profile (?seconds=N)${off}\nheap: heap snapshot${off}\n`);
    },
    { scope: false },
  );
  router.get(
    '/debug/pprof/profile',
    async (req, res) => {
      if (!options.profiling) throw profilingOff();
      const raw = req.query.get('seconds') ?? '30';
      if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 300) {
        throw new HttpError(400, 'bad_request', 'seconds must be a whole number from 1 to 300');
      }
      const controller = new AbortController();
      req.onAbort(() => controller.abort());
      const profile = await profileOr409(() => cpuProfile(Number(raw) * 1000, controller.signal));
      if (req.aborted) return;
      res
        .header('content-type', 'application/json')
        .header('content-disposition', contentDisposition('ratelimit.cpuprofile'))
        .send(profile);
    },
    { scope: false },
  );
  router.get(
    '/debug/pprof/heap',
    async (req, res) => {
      if (!options.profiling) throw profilingOff();
      const snapshot = await profileOr409(heapSnapshot);
      if (req.aborted) return;
      res
        .header('content-type', 'application/json')
        .header('content-disposition', contentDisposition('ratelimit.heapsnapshot'))
        .send(snapshot);
    },
    { scope: false },
  );
  return router;
}

async function profileOr409(take: () => Promise<string>): Promise<string> {
  try {
    return await take();
  } catch (error) {
    if (error instanceof ProfilerBusyError) throw new HttpError(409, 'conflict', error.message);
    throw error;
  }
}

export function startDebugServer(options: {
  host: string;
  port: number;
  /** Serve heap snapshots and CPU profiles (DEBUG_PROFILING_ENABLED). */
  profiling: boolean;
  sources: DebugSources;
  log: Logger;
  /** SLUICE_HTTP_TRANSPORT (default: read from the environment). */
  transport?: HttpTransportSetting;
}): Promise<HttpServerHandle> {
  return startHttpServer({
    name: 'ratelimit-debug',
    host: options.host,
    port: options.port,
    router: debugRouter(options.sources, { profiling: options.profiling }),
    errorBody,
    log: options.log,
    ...(options.transport === undefined ? {} : { transport: options.transport }),
  });
}
