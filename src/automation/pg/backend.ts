// The automation service on PostgreSQL (AUTOMATION_DATABASE_URL): one pool, the schema migrated
// at start, every store, the shared run queue and the API keys, opened together and closed
// together (docs/deployment.md).

import type { Logger } from '../../core/log.js';
import type { AutomationSettings } from '../settings.js';
import type { AutomationStores } from '../stores.js';
import { PgKeyStore } from './key-store.js';
import { migrate } from './migrations.js';
import { openPgDatabase, type PgDatabase } from './pool.js';
import { RegistryCache } from './registry-cache.js';
import { PgRunQueue } from './run-queue.js';

import { openPgStores } from './stores/index.js';

export interface PgBackend {
  db: PgDatabase;
  stores: AutomationStores;
  queue: PgRunQueue;
  keys: PgKeyStore;
  close(): Promise<void>;
}

export async function openPgBackend(settings: AutomationSettings, log: Logger): Promise<PgBackend> {
  if (!settings.database) throw new Error('AUTOMATION_DATABASE_URL is not set');
  const db = openPgDatabase(settings.database, {
    applicationName: `sluice-automation:${settings.nodeId}`,
    onIdleError: (err) => log.warn({ err: err.message }, 'a PostgreSQL connection broke'),
  });
  let queue: PgRunQueue | undefined;
  let keys: PgKeyStore | undefined;
  try {
    const migrated = await migrate(db);
    if (migrated.applied.length > 0) log.info(migrated, 'automation database migrated');
    const registryCache = new RegistryCache();
    // A run's progress is unacknowledged while this node runs it (holds its lease).
    const stores = openPgStores(db, { registryCache, runningHere: (id) => queue?.runsHere(id) ?? false });
    const q = (queue = new PgRunQueue(db, {
      nodeId: settings.nodeId,
      leaseMs: settings.leaseMs,
      tenantConcurrency: settings.tenantConcurrency,
      automationConcurrency: settings.automationConcurrency,
    }));
    // Each failed reconnect attempt says why; the line on reconnecting says how long it was away.
    let queueLostAt: number | undefined;
    q.on('disconnected', (err) => {
      queueLostAt ??= Date.now();
      log.warn({ err: err.message }, 'run queue listener disconnected from PostgreSQL');
    });
    q.on('listening', () => {
      if (queueLostAt === undefined) return;
      log.info({ awayMs: Date.now() - queueLostAt }, 'run queue listener reconnected to PostgreSQL');
      queueLostAt = undefined;
    });
    // At start and after each reconnection (an outage may have stranded runs between store and queue).
    const requeue = () =>
      q.requeueStranded().then(
        (n) => n > 0 && log.info({ runs: n }, 'stored runs that were never queued are queued now'),
        (err: Error) => log.warn({ err: err.message }, 'cannot look for runs that were never queued'),
      );
    q.on('listening', () => void requeue());
    // The registry cache shares the queue's listening connection: trusted only while it listens,
    // dropped by every registry write's notification and whenever the connection breaks.
    q.on('listening', () => registryCache.trust());
    q.on('disconnected', () => registryCache.distrust());
    q.on('registry', () => registryCache.drop());
    await q.start();
    const k = (keys = new PgKeyStore(db, {
      onError: (err) => log.warn({ err: err.message }, 'API key reload failed'),
      onDisconnected: () => log.warn('API key listener disconnected from PostgreSQL'),
      onReconnected: (awayMs) => log.info({ awayMs }, 'API key listener reconnected to PostgreSQL'),
    }));
    await k.start();
    return {
      db,
      stores,
      queue: q,
      keys: k,
      async close() {
        await q.close();
        await k.close();
        await stores.close();
        await db.close();
      },
    };
  } catch (err) {
    await queue?.close();
    await keys?.close();
    await db.close();
    throw err;
  }
}
