// The automation service's PostgreSQL connections (node-postgres, see docs/architecture.md): one
// pool per process, a query helper and transactions. A failure to reach the server becomes a
// DatabaseUnavailableError (503 naming PostgreSQL); the pool drops broken connections and opens
// new ones on the next query, so it recovers by itself once the server is back.

import { createHash } from 'node:crypto';
import { Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import { ApiError } from '../errors.js';
import type { DatabaseSettings } from '../settings.js';

/** Something that runs a statement: the pool, or the client of a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<QueryResult<R>>;
}

/** The database cannot be reached; HTTP answers 503 with the code `database_unavailable`. */
export class DatabaseUnavailableError extends ApiError {
  constructor(reason: string, cause?: unknown) {
    // The reason is a code (ECONNREFUSED, a SQLSTATE …), never the server's address.
    const message = `the automation database (PostgreSQL) is unavailable (${reason}); retry later`;
    super(
      503,
      'database_unavailable',
      message,
      [{ field: '<root>', message, code: 'database_unavailable' }],
      {
        'retry-after': '1',
      },
    );
    if (cause !== undefined) this.cause = cause;
  }
}

// Socket errors of the connection (Node's errno codes).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
// SQLSTATEs of a server that is going away or not there yet (PostgreSQL's "Appendix A. Error
// Codes"): admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. Class 08 is
// "connection exception".
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
// node-postgres raises these without a code (pg-pool's connect timeout, a connection that ended
// under a query, a client the pool already gave up on): its messages are the only signal.
const CLIENT_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|not queryable|Connection ended unexpectedly/i;

/** Why `err` means the server is unreachable (a short code), or undefined for any other error. */
export function unavailableReason(err: unknown): string | undefined {
  if (err instanceof DatabaseUnavailableError) return 'unavailable';
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SERVER_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return code;
  }
  if (CLIENT_MESSAGES.test(err.message))
    return /timeout/i.test(err.message) ? 'connect timeout' : 'connection lost';
  // An AggregateError holds one error per address tried (127.0.0.1 and ::1 for localhost).
  if (err instanceof AggregateError)
    for (const e of err.errors) if (unavailableReason(e)) return unavailableReason(e);
  return undefined;
}

/** `err` as a DatabaseUnavailableError when it is a connection failure, else unchanged. */
export function mapDatabaseError(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  const reason = unavailableReason(err);
  return reason ? new DatabaseUnavailableError(reason, err) : err;
}

export interface PgOptions {
  url: string;
  /** Connections at most (AUTOMATION_DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** How long a query waits for a connection before it fails as unavailable. */
  connectTimeoutMs?: number;
  /** Shown in pg_stat_activity, e.g. the node id. */
  applicationName?: string;
  /** Errors of idle connections (the server went away); they are dropped from the pool either way. */
  onIdleError?: (err: Error) => void;
}

export class PgDatabase implements Queryable {
  readonly pool: Pool;
  private closed = false;

  constructor(readonly options: PgOptions) {
    this.pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      // Finds a half-open connection (a server host that vanished) instead of waiting on it.
      keepAlive: true,
      application_name: options.applicationName ?? 'sluice-automation',
    });
    // Without a listener an idle connection's error (the server restarted) would be thrown.
    this.pool.on('error', (err) => options.onIdleError?.(err));
  }

  /** The pool's connections: open, idle, and callers waiting for one. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async query<R extends QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<QueryResult<R>> {
    try {
      const name = values === undefined ? undefined : statementName(text);
      if (name === undefined) return await this.pool.query<R>(text, values as unknown[] | undefined);
      try {
        return await this.pool.query<R>({ name, text, values: values as unknown[] });
      } catch (err) {
        // A table changed under a statement this connection prepared in a way that changes its
        // result (a migration by a newer node): run it unprepared (PostgreSQL answers 0A000,
        // "cached plan must not change result type").
        if ((err as { code?: string }).code !== '0A000') throw err;
        return await this.pool.query<R>(text, values as unknown[]);
      }
    } catch (err) {
      throw mapDatabaseError(err);
    }
  }

  /**
   * A connection of its own (LISTEN, session advisory locks); `release` gives it back, and
   * drops it when it broke.
   */
  async connect(): Promise<PoolClient & { release(broken?: boolean | Error): void }> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapDatabaseError(err);
    }
    // The pool listens for errors only while a client is idle; one in our hands needs its own.
    let failed: Error | undefined;
    const onError = (err: Error) => {
      failed = err;
    };
    client.on('error', onError);
    const release = client.release.bind(client);
    client.release = (broken?: boolean | Error) => {
      client.off('error', onError);
      release(broken ?? failed ?? false);
    };
    return client;
  }

  /** Runs `fn` in one transaction (READ COMMITTED): committed when it resolves, rolled back when it throws. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (unavailableReason(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw mapDatabaseError(err);
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

/** The pool the settings describe (AUTOMATION_DATABASE_URL, AUTOMATION_DATABASE_POOL_SIZE …). */
export function openPgDatabase(
  settings: DatabaseSettings,
  options: { applicationName?: string; onIdleError?: (err: Error) => void } = {},
): PgDatabase {
  return new PgDatabase({
    url: settings.url,
    poolSize: settings.poolSize,
    connectTimeoutMs: settings.connectTimeoutMs,
    ...options,
  });
}

/**
 * Named (prepared) statements: each connection parses and plans a statement the first time it
 * runs it, then reuses that (node-postgres sends Bind/Execute only; the server may keep a
 * generic plan after five executions: PostgreSQL docs, PREPARE, "Notes"). The run queue's
 * batch statements are long CTEs over array parameters whose parse and plan cost more CPU than
 * their execution. The name is derived from the text, so one name never means two statements.
 */
const statementNames = new Map<string, string>();
/**
 * Statements are built from templates, but some (run list filters) combine into many texts: only
 * the first this many distinct texts are prepared, so a connection never holds more than that
 * many prepared statements; later texts run unprepared.
 */
const MAX_NAMED_STATEMENTS = 256;

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `sluice_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}
