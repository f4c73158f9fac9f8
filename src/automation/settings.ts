// Every automation service setting, read once at start (environment only; a bad value stops the
// start naming the variable). The rest of the service is handed these values and reads no
// environment itself.

import { join } from 'node:path';
import { availableParallelism, hostname } from 'node:os';
import { SettingsError, type CoreSettings, type EnvReader } from '../core/settings/index.js';
import { loadTracingSettings, type TracingSettings } from '../core/tracing/settings.js';
import type { ArchiveLimits } from './archives/limits.js';
import { SCRIPT_LIMITS } from './evals/config-types.js';
import type { ScriptPoolOptions } from './evals/sandbox.js';

export interface AutomationSettings {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** TRACING_* (docs/operations.md "Traces"); service name `sluice-automation` by default. */
  readonly tracing: TracingSettings;
  readonly registryPath: string;
  readonly registryUrl: string | undefined;
  readonly seedBuiltins: boolean;
  readonly poolThreads: number;
  readonly maxQueuedRuns: number;
  readonly cancelGraceMs: number;
  readonly defaultTimeoutMs: number;
  readonly maxJsonBytes: number;
  readonly maxUploadBytes: number;
  readonly downloadTokenSecret: string | undefined;
  readonly downloadTokenTtlMs: number;
  /** How long an upload session (and its PUT URL) stays open. */
  readonly uploadSessionTtlMs: number;
  /**
   * The URL clients reach the service's root at, for the upload URLs it hands out; without it
   * they are built from the request's Host header over http.
   */
  readonly publicUrl: string | undefined;
  readonly listScanLimit: number;
  readonly listDefaultLimit: number;
  readonly listMaxLimit: number;
  /** Every archive read or written (dataset import/export, artifact ZIPs); see docs/limits.md. */
  readonly archiveLimits: ArchiveLimits;
  readonly archiveThreads: number;
  readonly openaiBaseUrl: string | undefined;
  readonly openaiApiKey: string | undefined;
  readonly openaiModel: string | undefined;
  /** Model of llm-judge evaluators whose config names none (`deterministic`: the offline judge). */
  readonly judgeModel: string | undefined;
  /** The evaluator worker pool (also runs schema checks with `pattern`); docs/evaluators.md. */
  readonly evalPool: Readonly<Required<ScriptPoolOptions>>;
  /** Experiment examples run at once per experiment. */
  readonly experimentConcurrency: number;
  /** PostgreSQL for stores, run queue and blobs (several nodes); undefined: LMDB and local files. */
  readonly database: DatabaseSettings | undefined;
  /** How this node names itself in the shared run queue (the owner of the runs it claimed). */
  readonly nodeId: string;
  /** How long a claimed run stays this node's without a renewal; renewed every third of it. */
  readonly leaseMs: number;
  /** Runs of one tenant / one automation running at once across every node; 0: no limit. */
  readonly tenantConcurrency: number;
  readonly automationConcurrency: number;
  /** Schedules (docs/automation.md, "Triggers"): ticks fired after a gap, the latest ones. */
  readonly cronCatchup: number;
  /** How often a node looks for schedules due (besides waking at the earliest next tick it knows). */
  readonly cronPollMs: number;
  /** The email trigger (docs/automation.md "Triggers"); undefined: no SMTP listener (the default). */
  readonly email: EmailTriggerSettings | undefined;
  /** What the background retention pass removes and when (docs/operations.md "Data lifecycle"). */
  readonly retention: RetentionSettings;
}

export interface EmailTriggerSettings {
  /** AUTOMATION_SMTP_PORT; 0 takes a free port (tests). */
  readonly port: number;
  readonly host: string;
  /** Mail is taken for `<alias>@<domain>` only. */
  readonly domain: string;
  /** Lower-cased `user@domain` addresses and `*@domain` patterns a message may come from. */
  readonly senders: readonly string[];
  /** The SIZE limit of a message as received (headers, bodies and encoded attachments). */
  readonly maxMessageBytes: number;
  readonly maxAttachments: number;
  /** RCPT commands taken per message; more are refused (452) without a lookup. */
  readonly maxRecipients: number;
  /** Connections open at once; more are turned away at connect. */
  readonly maxClients: number;
  /** The relay replies go out through. */
  readonly relay: RelaySettings;
  /** The From address of replies. */
  readonly from: string;
  /** Sending attempts of one reply, and the first wait between two (doubled each time, at most 5 min). */
  readonly replyAttempts: number;
  readonly replyBackoffMs: number;
}

export interface RelaySettings {
  readonly host: string;
  readonly port: number;
  /** smtps://: TLS from the first byte; smtp://: STARTTLS when the relay offers it. */
  readonly secure: boolean;
  /** `?starttls=required`: refuse to send over a relay that does not offer STARTTLS. */
  readonly requireTls: boolean;
  readonly user: string | undefined;
  readonly pass: string | undefined;
  /** The URL with its password replaced, for logs. */
  readonly shown: string;
}

export interface RetentionSettings {
  /** Ended runs older than this (by completion) are removed; undefined: kept forever. */
  readonly runRetentionMs: number | undefined;
  /** Files uploaded with purpose `run-input` are removed this long after their upload. */
  readonly uploadRetentionMs: number;
  /** The `.blobs/` caches of run folders are kept under this many bytes; undefined: unbounded. */
  readonly cacheMaxBytes: number | undefined;
  /** Time between two retention passes. */
  readonly intervalMs: number;
}

export interface DatabaseSettings {
  /** A postgres:// or postgresql:// connection URL (may hold a password: never log it). */
  readonly url: string;
  readonly poolSize: number;
  /** How long a query waits for a pool connection before it fails as database_unavailable. */
  readonly connectTimeoutMs: number;
}

export function loadAutomationSettings(env: EnvReader, core: CoreSettings): AutomationSettings {
  const dataDir = join(core.dataDir, 'automation');
  return Object.freeze({
    host: core.automation.host,
    port: core.automation.port,
    dataDir,
    tracing: loadTracingSettings(env, 'sluice-automation'),
    registryPath: env.string('AUTOMATION_REGISTRY_PATH', join(dataDir, 'registry.git')),
    registryUrl: env.optionalString('AUTOMATION_REGISTRY_URL'),
    seedBuiltins: env.bool('AUTOMATION_SEED_BUILTINS', true),
    poolThreads: env.int('AUTOMATION_POOL_THREADS', Math.min(2, availableParallelism()), { min: 1, max: 64 }),
    maxQueuedRuns: env.int('AUTOMATION_MAX_QUEUED_RUNS', 10_000, { min: 1 }),
    cancelGraceMs: env.duration('AUTOMATION_CANCEL_GRACE', 5_000),
    defaultTimeoutMs: env.duration('AUTOMATION_DEFAULT_TIMEOUT', 10 * 60_000),
    maxJsonBytes: env.int('AUTOMATION_MAX_JSON_BYTES', 10 * 1024 * 1024, { min: 1024 }),
    maxUploadBytes: env.int('AUTOMATION_MAX_UPLOAD_BYTES', 100 * 1024 * 1024, { min: 1024 }),
    downloadTokenSecret: env.optionalString('AUTOMATION_DOWNLOAD_TOKEN_SECRET'),
    downloadTokenTtlMs: env.duration('AUTOMATION_DOWNLOAD_TOKEN_TTL', 60 * 60_000),
    uploadSessionTtlMs: positiveDuration(env, 'AUTOMATION_UPLOAD_SESSION_TTL', 60 * 60_000),
    publicUrl: publicUrl(env, 'AUTOMATION_PUBLIC_URL'),
    listScanLimit: env.int('AUTOMATION_LIST_SCAN_LIMIT', 20_000, { min: 100 }),
    listDefaultLimit: env.int('AUTOMATION_LIST_DEFAULT_LIMIT', 50, { min: 1, max: 1000 }),
    listMaxLimit: env.int('AUTOMATION_LIST_MAX_LIMIT', 500, { min: 1, max: 10_000 }),
    archiveLimits: Object.freeze({
      maxBytes: env.int('AUTOMATION_ARCHIVE_MAX_BYTES', 256 * 1024 * 1024, { min: 1024 }),
      maxUncompressedBytes: env.int('AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES', 512 * 1024 * 1024, {
        min: 1024,
      }),
      maxEntries: env.int('AUTOMATION_ARCHIVE_MAX_ENTRIES', 20_000, { min: 1, max: 65_534 }),
    }),
    archiveThreads: env.int('AUTOMATION_ARCHIVE_THREADS', 1, { min: 1, max: 16 }),
    openaiBaseUrl: env.optionalString('AUTOMATION_OPENAI_BASE_URL'),
    openaiApiKey: env.optionalString('AUTOMATION_OPENAI_API_KEY'),
    openaiModel: env.optionalString('AUTOMATION_OPENAI_MODEL'),
    judgeModel: env.optionalString('AUTOMATION_JUDGE_MODEL'),
    evalPool: loadEvalPool(env),
    experimentConcurrency: env.int('AUTOMATION_EXPERIMENT_CONCURRENCY', 8, { min: 1, max: 256 }),
    database: loadDatabase(env),
    nodeId: nodeId(env),
    leaseMs: positiveDuration(env, 'AUTOMATION_RUN_LEASE', 30_000),
    tenantConcurrency: env.int('AUTOMATION_TENANT_CONCURRENCY', 0, { min: 0 }),
    automationConcurrency: env.int('AUTOMATION_AUTOMATION_CONCURRENCY', 0, { min: 0 }),
    cronCatchup: env.int('AUTOMATION_CRON_CATCHUP', 1, { min: 1, max: 1000 }),
    cronPollMs: positiveDuration(env, 'AUTOMATION_CRON_POLL', 5_000),
    email: loadEmail(env, core.automation.host),
    retention: loadRetention(env),
  });
}

const SENDER = /^(\*|[^\s@*]+)@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;
const DOMAIN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

function loadEmail(env: EnvReader, host: string): EmailTriggerSettings | undefined {
  if (env.optionalString('AUTOMATION_SMTP_PORT') === undefined) return undefined;
  const port = env.int('AUTOMATION_SMTP_PORT', 0, { min: 0, max: 65_535 });
  const domain = (env.optionalString('AUTOMATION_EMAIL_DOMAIN') ?? '').toLowerCase();
  if (!DOMAIN.test(domain))
    throw new SettingsError(
      'AUTOMATION_EMAIL_DOMAIN',
      domain,
      'a domain name (needed with AUTOMATION_SMTP_PORT)',
    );
  const senders = env.list('AUTOMATION_EMAIL_SENDERS').map((s) => s.trim().toLowerCase());
  const bad = senders.find((s) => !SENDER.test(s));
  if (senders.length === 0 || bad !== undefined)
    throw new SettingsError(
      'AUTOMATION_EMAIL_SENDERS',
      senders.join(','),
      'a comma list of user@domain addresses and *@domain patterns (needed with AUTOMATION_SMTP_PORT)',
    );
  return Object.freeze({
    port,
    host: env.string('AUTOMATION_SMTP_HOST', host),
    domain,
    senders: Object.freeze(senders),
    maxMessageBytes: env.size('AUTOMATION_EMAIL_MAX_BYTES', 10 * 1024 * 1024),
    maxAttachments: env.int('AUTOMATION_EMAIL_MAX_ATTACHMENTS', 20, { min: 0, max: 1000 }),
    maxRecipients: env.int('AUTOMATION_EMAIL_MAX_RECIPIENTS', 10, { min: 1, max: 100 }),
    maxClients: env.int('AUTOMATION_SMTP_MAX_CLIENTS', 50, { min: 1, max: 10_000 }),
    relay: relaySettings(env),
    from: (env.optionalString('AUTOMATION_EMAIL_FROM') ?? `sluice@${domain}`).trim(),
    replyAttempts: env.int('AUTOMATION_EMAIL_REPLY_ATTEMPTS', 6, { min: 1, max: 100 }),
    replyBackoffMs: env.duration('AUTOMATION_EMAIL_REPLY_BACKOFF', 2_000),
  });
}

/** AUTOMATION_SMTP_RELAY: smtp://[user:pass@]host[:port][?starttls=required] or smtps://… */
function relaySettings(env: EnvReader): RelaySettings {
  const name = 'AUTOMATION_SMTP_RELAY';
  const text = env.optionalString(name);
  let url: URL | undefined;
  try {
    url = text === undefined ? undefined : new URL(text);
  } catch {
    url = undefined;
  }
  const starttls = url?.searchParams.get('starttls') ?? null;
  if (
    !url ||
    (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') ||
    !url.hostname ||
    [...url.searchParams.keys()].some((k) => k !== 'starttls') ||
    (starttls !== null && starttls !== 'required' && starttls !== 'opportunistic')
  )
    throw new SettingsError(
      name,
      text === undefined ? '' : redactUrl(text),
      'smtp://[user:pass@]host[:port][?starttls=required] or smtps://… (needed with AUTOMATION_SMTP_PORT: replies go through it)',
    );
  const secure = url.protocol === 'smtps:';
  return Object.freeze({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTls: starttls === 'required',
    user: url.username ? decodeURIComponent(url.username) : undefined,
    pass: url.password ? decodeURIComponent(url.password) : undefined,
    shown: redactUrl(text!),
  });
}

/** `keep` (or unset) keeps forever, as `0` does for the cache bound. */
function loadRetention(env: EnvReader): RetentionSettings {
  const keep = (name: string) => {
    const text = env.optionalString(name)?.trim().toLowerCase();
    return text === undefined || text === '' || text === 'keep' || text === 'forever';
  };
  const runs = 'AUTOMATION_RUN_RETENTION';
  const cache = 'AUTOMATION_CACHE_MAX_BYTES';
  const cacheBytes = keep(cache) ? 0 : env.size(cache, 0);
  return Object.freeze({
    runRetentionMs: keep(runs) ? undefined : positiveDuration(env, runs, 0),
    // The product removes run-input uploads after 24 hours.
    uploadRetentionMs: positiveDuration(env, 'AUTOMATION_UPLOAD_RETENTION', 24 * 3600_000),
    cacheMaxBytes: cacheBytes > 0 ? cacheBytes : undefined,
    intervalMs: boundedDuration(env, 'AUTOMATION_RETENTION_CHECK_INTERVAL', 5 * 60_000, 10, 24 * 3600_000),
  });
}

function boundedDuration(env: EnvReader, name: string, fallbackMs: number, min: number, max: number): number {
  const ms = env.duration(name, fallbackMs);
  if (ms < min || ms > max)
    throw new SettingsError(
      name,
      env.optionalString(name) ?? '',
      `a duration from ${min}ms to ${max / 3600_000}h`,
    );
  return ms;
}

function loadDatabase(env: EnvReader): DatabaseSettings | undefined {
  const name = 'AUTOMATION_DATABASE_URL';
  const text = env.optionalString(name);
  if (text === undefined || text === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') || !url.hostname)
    // The value may carry a password: the error shows it replaced.
    throw new SettingsError(name, redactUrl(text), 'a postgres:// or postgresql:// URL with a host');
  return Object.freeze({
    url: text,
    poolSize: env.int('AUTOMATION_DATABASE_POOL_SIZE', 10, { min: 1, max: 1000 }),
    connectTimeoutMs: positiveDuration(env, 'AUTOMATION_DATABASE_CONNECT_TIMEOUT', 10_000),
  });
}

/** The URL with any password replaced, for messages and logs. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password) url.password = '***';
    return url.href;
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text);
    return scheme ? `${scheme[0]}…` : '…';
  }
}

/** Letters, digits, `.`, `_`, `-`; default: host name and process id (unique per process). */
function nodeId(env: EnvReader): string {
  const name = 'AUTOMATION_NODE_ID';
  const text = env.optionalString(name);
  if (text === undefined)
    return `${hostname()}-${process.pid}`.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(text))
    throw new SettingsError(name, text, '1 to 100 letters, digits, ".", "_" or "-"');
  return text;
}

function loadEvalPool(env: EnvReader): Readonly<Required<ScriptPoolOptions>> {
  return Object.freeze({
    // Threads per memory limit used by configs; scoring is rare next to the runs it scores.
    maxThreads: env.int('AUTOMATION_EVAL_THREADS', 1, { min: 1, max: 64 }),
    defaultMemoryLimitMb: env.int('AUTOMATION_EVAL_MEMORY_MB', SCRIPT_LIMITS.memoryMb.def, {
      min: SCRIPT_LIMITS.memoryMb.min,
      max: SCRIPT_LIMITS.memoryMb.max,
    }),
    graceMs: env.duration('AUTOMATION_EVAL_KILL_GRACE', 2000),
    idleTimeoutMs: env.duration('AUTOMATION_EVAL_IDLE_TIMEOUT', 30_000),
    // Regex evaluators and validation against schemas with `pattern` (evaluators, run input
    // and output schemas); legitimate patterns finish in microseconds.
    patternTimeoutMs: env.duration('AUTOMATION_PATTERN_TIMEOUT', 1000),
    // On by default so existing configs keep working; docs/security.md says what it exposes.
    customScripts: env.bool('AUTOMATION_CUSTOM_SCRIPTS', true),
  });
}

function positiveDuration(env: EnvReader, name: string, fallbackMs: number): number {
  const ms = env.duration(name, fallbackMs);
  if (ms < 1000) throw new SettingsError(name, env.optionalString(name) ?? '', 'a duration of at least 1s');
  return ms;
}

/** An http(s) URL without query or fragment; a trailing `/` is dropped. */
function publicUrl(env: EnvReader, name: string): string | undefined {
  const text = env.optionalString(name);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SettingsError(name, text, 'an http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username)
    throw new SettingsError(name, text, 'an http or https URL without query, fragment or credentials');
  return url.href.replace(/\/+$/, '');
}
