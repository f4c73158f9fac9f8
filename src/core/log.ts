// One pino logger per thread. LOG_FORMAT=json gives the spec's fields (`@message`,
// `@timestamp`, `level` as a word); the default text format is one readable line per event.
// The settings come from core settings (loadLogSettings), handed in through configureLogging.

import { pino, type Logger, type LoggerOptions } from 'pino';
import { loadLogSettings, type LogFormat, type LogLevel, type LogSettings } from './settings/index.js';

export type { Logger } from 'pino';

let root: Logger | undefined;

/** Sets this thread's logger; call it before the first log line (later calls replace the root). */
export function configureLogging(settings: LogSettings): void {
  root = buildLogger(settings.level, settings.format);
}

export function buildLogger(level: LogLevel, format: LogFormat): Logger {
  const options: LoggerOptions = {
    level,
    base: null,
    messageKey: format === 'json' ? '@message' : 'msg',
    timestamp:
      format === 'json' ? () => `,"@timestamp":"${new Date().toISOString()}"` : pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  // Logs go to stderr in both formats; stdout carries only the start banner and CLI output.
  if (format === 'json') return pino(options, pino.destination({ fd: 2, sync: true }));
  // Text: a small synchronous line writer; pino-pretty is not a dependency.
  return pino(options, {
    write(line: string) {
      try {
        const {
          level: lvl,
          time,
          msg,
          name,
          ...rest
        } = JSON.parse(line) as Record<string, string | undefined>;
        const extra = Object.keys(rest).length > 0 ? ' ' + JSON.stringify(rest) : '';
        process.stderr.write(
          `${String(time)} ${String(lvl).toUpperCase()} ${name ? `[${name}] ` : ''}${msg ?? ''}${extra}\n`,
        );
      } catch {
        process.stderr.write(line);
      }
    },
  });
}

/** This thread's logger; a thread nobody configured reads the log settings on first use. */
export function rootLogger(): Logger {
  if (!root) configureLogging(loadLogSettings());
  return root!;
}

export function createLogger(name: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ name, ...bindings });
}
