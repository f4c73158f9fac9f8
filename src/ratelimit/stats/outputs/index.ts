// Starts the statistics outputs chosen by the settings: one push output (statsd, tagged statsd or
// standard output) flushed every STATS_FLUSH_INTERVAL, and the pull endpoint. The shared table
// holds process-wide totals, so this runs once per process (thread 0), never per front-end thread.

import type { Logger } from '../../../core/log.js';
import type { StatsOutputSettings } from '../../settings/index.js';
import type { SharedStatsTable } from '../shared-table.js';
import type { StatsSink } from '../types.js';
import { builtinMapping, loadMappingFile } from './prom-mapping.js';
import { startPullServer } from './pull-server.js';
import { StatsdSink } from './statsd-sink.js';
import { StdoutSink } from './stdout-sink.js';

export interface StatsOutputs {
  /** URL of the pull endpoint when it is enabled. */
  readonly pullUrl: string | undefined;
  /** Pushes what changed since the last flush now (also done on close). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface StatsOutputOptions {
  log?: Logger;
  /** Where USE_PUSHSTATS=false prints; standard output by default. */
  stdout?: { write(text: string): unknown };
}

export async function startStatsOutputs(
  table: SharedStatsTable,
  settings: StatsOutputSettings,
  options: StatsOutputOptions = {},
): Promise<StatsOutputs> {
  const log = options.log;
  if (settings.disabled) {
    log?.info('statistics outputs disabled (DISABLE_STATS)');
    return { pullUrl: undefined, flush: async () => undefined, close: async () => undefined };
  }
  // A broken mapping file must stop the start, before any listener is opened.
  const rules = settings.pull.enabled
    ? settings.pull.mapperYaml !== undefined
      ? loadMappingFile(settings.pull.mapperYaml)
      : builtinMapping(settings.pull.responseTimeAsMilliseconds)
    : [];
  const extraTags = Object.entries(settings.extraTags);
  let sink: StatsSink | undefined;
  if (settings.push.mode === 'statsd') {
    sink = new StatsdSink({ ...settings.push, extraTags, ...(log ? { log } : {}) });
  } else if (settings.push.mode === 'stdout') {
    sink = new StdoutSink(extraTags, options.stdout ?? process.stdout);
  }
  const pull = settings.pull.enabled
    ? await startPullServer({
        host: settings.pull.host,
        port: settings.pull.port,
        path: settings.pull.path,
        rules,
        extraTags: settings.extraTags,
        snapshot: () => table.snapshot(),
        ...(log ? { log } : {}),
      })
    : undefined;

  let running: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (!sink) return Promise.resolve();
    const s = sink;
    // Flushes never overlap: a slow TCP statsd delays the next one instead of interleaving.
    running = running.then(async () => {
      try {
        await s.flush(table.snapshot());
      } catch (err) {
        log?.warn({ err: (err as Error).message }, 'statistics flush failed');
      }
    });
    return running;
  };
  const timer = sink ? setInterval(() => void flush(), settings.flushIntervalMs) : undefined;
  timer?.unref();
  log?.info(
    { push: settings.push.mode, tagged: settings.push.tagged, pull: pull?.url },
    'statistics outputs started',
  );

  let closing: Promise<void> | undefined;
  return {
    pullUrl: pull?.url,
    flush,
    close() {
      closing ??= (async () => {
        if (timer) clearInterval(timer);
        await flush();
        await sink?.close();
        await pull?.close();
      })();
      return closing;
    },
  };
}

export { StatsdSink } from './statsd-sink.js';
export { StdoutSink } from './stdout-sink.js';
export { renderPrometheus } from './prom-render.js';
export { builtinMapping, parseMapping, loadMappingFile, MappingError } from './prom-mapping.js';
