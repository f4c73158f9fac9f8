// Settings come from the environment only. Every read goes through EnvReader so a bad value
// stops the start with one message naming the variable and the value it had.

import { availableParallelism } from 'node:os';
import { resolveDataDir } from './data-dir.js';
import { parseDuration } from './duration.js';
import { CodedError } from '../errors.js';

export { parseDuration } from './duration.js';
export {
  DATA_DIR_DEFAULT,
  DATA_DIR_MARKER,
  DATA_DIR_SETTING,
  DataDirError,
  requireDataDir,
  resolveDataDir,
} from './data-dir.js';

export class SettingsError extends CodedError {
  constructor(
    readonly variable: string,
    readonly value: string,
    expected: string,
  ) {
    super('invalid_setting', `invalid setting ${variable}=${JSON.stringify(value)}: expected ${expected}`);
  }
}

type Names = string | readonly string[];

interface NumberBounds {
  min?: number;
  max?: number;
}

const TRUE_WORDS = new Set(['true', '1', 't', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'f', 'no', 'n', 'off']);

/** Typed, validating access to environment variables. Names may list aliases: the first set wins. */
export class EnvReader {
  private readonly env: Readonly<Record<string, string | undefined>>;

  constructor(env: Readonly<Record<string, string | undefined>> = process.env) {
    this.env = env;
  }

  /** The first of `names` that is set (an empty string counts as unset), with its value. */
  lookup(names: Names): { name: string; value: string } | undefined {
    for (const name of typeof names === 'string' ? [names] : names) {
      const value = this.env[name];
      if (value !== undefined && value !== '') return { name, value };
    }
    return undefined;
  }

  has(names: Names): boolean {
    return this.lookup(names) !== undefined;
  }

  string(names: Names, fallback: string): string {
    return this.lookup(names)?.value ?? fallback;
  }

  optionalString(names: Names): string | undefined {
    return this.lookup(names)?.value;
  }

  int(names: Names, fallback: number, bounds: NumberBounds = {}): number {
    const found = this.lookup(names);
    if (!found) return fallback;
    const text = found.value.trim();
    if (!/^[-+]?\d+$/.test(text)) throw new SettingsError(found.name, found.value, 'an integer');
    const value = Number(text);
    checkBounds(found.name, found.value, value, bounds);
    return value;
  }

  float(names: Names, fallback: number, bounds: NumberBounds = {}): number {
    const found = this.lookup(names);
    if (!found) return fallback;
    const value = Number(found.value.trim());
    if (found.value.trim() === '' || !Number.isFinite(value)) {
      throw new SettingsError(found.name, found.value, 'a number');
    }
    checkBounds(found.name, found.value, value, bounds);
    return value;
  }

  bool(names: Names, fallback: boolean): boolean {
    const found = this.lookup(names);
    if (!found) return fallback;
    const word = found.value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    throw new SettingsError(found.name, found.value, 'a boolean (true/false)');
  }

  /** Milliseconds, from `500ms`, `10s`, `1m`, `2h45m`, `1.5s`, `250us` … or a bare number of seconds. */
  duration(names: Names, fallbackMs: number): number {
    const found = this.lookup(names);
    if (!found) return fallbackMs;
    const ms = parseDuration(found.value);
    if (ms === undefined) {
      throw new SettingsError(found.name, found.value, 'a duration such as 500ms, 10s, 1m or 1h30m');
    }
    return ms;
  }

  /** Bytes, from `4096`, `512KiB`, `64MiB`, `1GiB` (also `k`/`m`/`g`, `KB`/`MB`/`GB`: powers of 1024). */
  size(names: Names, fallback: number): number {
    const found = this.lookup(names);
    if (!found) return fallback;
    const m = /^(\d+)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)$/i.exec(found.value.trim());
    if (!m) throw new SettingsError(found.name, found.value, 'a size such as 4096, 512KiB, 64MiB or 1GiB');
    const unit = m[2]!.toLowerCase().charAt(0);
    const scale = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
    return Number(m[1]) * scale;
  }

  enumeration<T extends string>(names: Names, values: readonly T[], fallback: T): T {
    const found = this.lookup(names);
    if (!found) return fallback;
    const exact = values.find((v) => v === found.value.trim());
    if (exact !== undefined) return exact;
    const loose = values.find((v) => v.toLowerCase() === found.value.trim().toLowerCase());
    if (loose !== undefined) return loose;
    throw new SettingsError(found.name, found.value, `one of ${values.join(', ')}`);
  }

  /** A comma list; blanks are dropped. */
  list(names: Names, fallback: readonly string[] = []): string[] {
    const found = this.lookup(names);
    if (!found) return [...fallback];
    return found.value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }

  /** `<k1:v1>,<k2:v2>` (angle brackets optional) → { k1: 'v1', k2: 'v2' }. */
  pairs(names: Names): Record<string, string> {
    const found = this.lookup(names);
    const out: Record<string, string> = {};
    if (!found) return out;
    for (const raw of splitPairs(found.value)) {
      const item = raw.trim().replace(/^<(.*)>$/, '$1');
      if (item === '') continue;
      const colon = item.indexOf(':');
      if (colon <= 0) throw new SettingsError(found.name, found.value, 'a list of <key:value> pairs');
      out[item.slice(0, colon).trim()] = item.slice(colon + 1).trim();
    }
    return out;
  }
}

/** Splits on commas that are not inside <…>, so a value may itself contain a comma. */
function splitPairs(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '<') depth++;
    if (ch === '>') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function checkBounds(name: string, raw: string, value: number, bounds: NumberBounds): void {
  if (bounds.min !== undefined && value < bounds.min) {
    throw new SettingsError(name, raw, `a number ≥ ${bounds.min}`);
  }
  if (bounds.max !== undefined && value > bounds.max) {
    throw new SettingsError(name, raw, `a number ≤ ${bounds.max}`);
  }
}

export type LogFormat = 'text' | 'json';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogSettings {
  readonly level: LogLevel;
  readonly format: LogFormat;
}

/**
 * LOG_LEVEL and LOG_FORMAT, the only reader of them: the main thread hands the result to
 * configureLogging (src/core/log.ts) and to each front-end thread; a thread nobody configured
 * (worker pools, CLI commands) reads them here on its first log line.
 */
export function loadLogSettings(env: EnvReader = new EnvReader()): LogSettings {
  const level = env.enumeration('LOG_LEVEL', [...LOG_LEVELS, 'warning'] as const, 'info');
  return Object.freeze({
    level: level === 'warning' ? 'warn' : level,
    format: env.enumeration('LOG_FORMAT', ['text', 'json'] as const, 'text'),
  });
}

export const HTTP_TRANSPORTS = ['auto', 'uws', 'node'] as const;
export type HttpTransportSetting = (typeof HTTP_TRANSPORTS)[number];

/**
 * SLUICE_HTTP_TRANSPORT: `uws`, `node`, or unset/`auto` (a uWS build that loads, else node:http).
 * Read here for the core settings, and by the HTTP core for servers started without them.
 */
export function loadHttpTransportSetting(env: EnvReader = new EnvReader()): HttpTransportSetting {
  return env.enumeration('SLUICE_HTTP_TRANSPORT', HTTP_TRANSPORTS, 'auto');
}

export interface CoreSettings {
  /** SLUICE_DATA_DIR, absolute (resolveDataDir: the CLI's commands find it the same way). */
  readonly dataDir: string;
  /** Front-end worker threads, each running the uWS apps on the shared ports. */
  readonly threads: number;
  /** Which HTTP transport serves (SLUICE_HTTP_TRANSPORT). */
  readonly httpTransport: HttpTransportSetting;
  readonly log: LogSettings;
  /** Accepted as an admin key in addition to the stored keys (scripted set-ups, tests). */
  readonly adminToken: string | undefined;
  /** Time allowed for in-flight requests after a stop signal before sockets are closed. */
  readonly shutdownGraceMs: number;
  /** Free space writers leave on the data directory's file system (SLUICE_DISK_RESERVE). */
  readonly diskReserveBytes: number;
  readonly streams: { readonly host: string; readonly port: number };
  readonly automation: { readonly host: string; readonly port: number };
  /** Probes, metrics and the access log of every service's HTTP port (docs/operations.md). */
  readonly observe: ObserveSettings;
}

export interface ObserveSettings {
  /** SLUICE_METRICS: serve GET /metrics on each service's HTTP port. */
  readonly metrics: boolean;
  /** SLUICE_METRICS_AUTH: /metrics asks for a bearer key (any valid key). */
  readonly metricsAuth: boolean;
  /** SLUICE_ACCESS_LOG: one log line per request. */
  readonly accessLog: boolean;
}

export function loadObserveSettings(env: EnvReader = new EnvReader()): ObserveSettings {
  return Object.freeze({
    metrics: env.bool('SLUICE_METRICS', true),
    metricsAuth: env.bool('SLUICE_METRICS_AUTH', false),
    accessLog: env.bool('SLUICE_ACCESS_LOG', false),
  });
}

/** 64 MiB: above the largest produce body (16 MiB) with room for LMDB's own pages. */
export const DEFAULT_DISK_RESERVE = 64 * 1024 * 1024;

export function loadCoreSettings(env: EnvReader = new EnvReader()): CoreSettings {
  return Object.freeze({
    dataDir: resolveDataDir(env),
    threads: env.int('SLUICE_THREADS', availableParallelism(), { min: 1, max: 256 }),
    httpTransport: loadHttpTransportSetting(env),
    log: loadLogSettings(env),
    adminToken: env.optionalString('SLUICE_ADMIN_TOKEN'),
    shutdownGraceMs: env.duration('SLUICE_SHUTDOWN_GRACE', 10_000),
    diskReserveBytes: env.size('SLUICE_DISK_RESERVE', DEFAULT_DISK_RESERVE),
    streams: Object.freeze({
      host: env.string('STREAMS_HOST', '0.0.0.0'),
      port: env.int('STREAMS_PORT', 8082, { min: 0, max: 65535 }),
    }),
    automation: Object.freeze({
      host: env.string('AUTOMATION_HOST', '0.0.0.0'),
      port: env.int('AUTOMATION_PORT', 8083, { min: 0, max: 65535 }),
    }),
    observe: loadObserveSettings(env),
  });
}
