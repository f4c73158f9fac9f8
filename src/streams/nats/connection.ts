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

/** Connects to the first reachable server; fails (does not wait forever) when none answers. */
export async function connectNats(settings: NatsSettings, name: string): Promise<NatsConnection> {
  try {
    return await connect(natsOptions(settings, name));
  } catch (error) {
    throw new Error(
      `cannot connect to NATS at ${settings.servers.join(', ')} (STREAMS_NATS_SERVERS): ${(error as Error).message}`,
      { cause: error },
    );
  }
}
