// The NATS connection of the JetStream backend, built from the streams settings. The client keeps
// reconnecting for as long as the service runs (to any of the configured servers), so the service
// recovers by itself when the cluster is back; requests made meanwhile time out into 503s.

import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import type { Logger } from '../../core/log.js';
import type { NatsSettings } from '../settings.js';

export type { NatsConnection } from '@nats-io/transport-node';

export function natsOptions(settings: NatsSettings, name: string): NodeConnectionOptions {
  const options: NodeConnectionOptions = {
    servers: [...settings.servers],
    name,
    timeout: settings.timeoutMs,
    // Never give up: a node outlives any outage of the cluster.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // A server that stops answering (without closing the socket) is left after two missed pings.
    pingInterval: 5_000,
    maxPingOut: 2,
  };
  if (settings.user !== undefined) {
    options.user = settings.user;
    options.pass = settings.password ?? '';
  }
  if (settings.token !== undefined) options.token = settings.token;
  if (settings.credsFile !== undefined) {
    options.authenticator = credsAuthenticator(readFileSync(settings.credsFile));
  }
  if (settings.tls) options.tls = { ...settings.tls };
  else if (settings.servers.some((s) => s.startsWith('tls://'))) options.tls = {};
  return options;
}

/**
 * Connects to the first reachable server; fails (does not wait forever) when none answers. With
 * `log`, each loss of the connection is logged, and each return with how long it was away.
 */
export async function connectNats(
  settings: NatsSettings,
  name: string,
  log: Logger | undefined,
): Promise<NatsConnection> {
  try {
    const nc = await connect(natsOptions(settings, name));
    if (log) void logConnectionChanges(nc, name, log);
    return nc;
  } catch (error) {
    throw new Error(
      `cannot connect to NATS at ${settings.servers.join(', ')} (STREAMS_NATS_SERVERS): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

async function logConnectionChanges(nc: NatsConnection, name: string, log: Logger): Promise<void> {
  let lostAt: number | undefined;
  try {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' && lostAt === undefined) {
        lostAt = Date.now();
        log.warn({ connection: name, server: status.server }, 'NATS connection lost; reconnecting');
      } else if (status.type === 'reconnect') {
        const awayMs = lostAt === undefined ? undefined : Date.now() - lostAt;
        lostAt = undefined;
        log.info({ connection: name, server: status.server, awayMs }, 'NATS connection back');
      }
    }
  } catch {
    // The connection closed: nothing more to report.
  }
}
