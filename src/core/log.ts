// One pino logger for the process. LOG_FORMAT=json gives the spec's fields (`@message`,
// `@timestamp`, `level` as a word); the default text format is one readable line per event.

import { pino, type Logger, type LoggerOptions } from 'pino';
import { EnvReader, LOG_LEVELS, type LogFormat, type LogLevel } from './settings/index.js';

export type { Logger } from 'pino';

let root: Logger | undefined;

function levelFromEnv(env: EnvReader): LogLevel {
  const level = env.enumeration('LOG_LEVEL', [...LOG_LEVELS, 'warning'] as const, 'info');
  return level === 'warning' ? 'warn' : level;
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

/** The process logger, configured from LOG_LEVEL and LOG_FORMAT on first use. */
export function rootLogger(): Logger {
  if (!root) {
    const env = new EnvReader();
    root = buildLogger(levelFromEnv(env), env.enumeration('LOG_FORMAT', ['text', 'json'] as const, 'text'));
  }
  return root;
}

export function createLogger(name: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ name, ...bindings });
}
