// Turns RedisSettings into an ioredis client (single, sentinel or cluster). Every client fails
// fast instead of queueing: no retry of a sent command (a resent INCRBY would count twice), and
// the failure policy decides what a failed decision answers.

import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisSettings, TlsFiles } from '../settings/index.js';
import { defineScripts } from './redis-scripts.js';

export type RedisClient = Redis | Cluster;

export function tlsOptions(tls: TlsFiles): ConnectionOptions {
  const options: ConnectionOptions = {};
  if (tls.caCert !== undefined) options.ca = readFileSync(tls.caCert);
  if (tls.clientCert !== undefined) options.cert = readFileSync(tls.clientCert);
  if (tls.clientKey !== undefined) options.key = readFileSync(tls.clientKey);
  // Skipping the name check still verifies the chain against the CA.
  if (tls.skipHostnameVerification) options.checkServerIdentity = () => undefined;
  return options;
}

/** Reconnect forever, quickly at first, never slower than every 2 s, so recovery is prompt. */
function reconnectDelay(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 6), 2000);
}

function baseOptions(s: RedisSettings): RedisOptions {
  const options: RedisOptions = {
    connectTimeout: s.timeoutMs,
    commandTimeout: s.timeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    enableReadyCheck: true,
    lazyConnect: false,
    retryStrategy: reconnectDelay,
  };
  if (s.auth) {
    if (s.auth.username !== undefined) options.username = s.auth.username;
    options.password = s.auth.password;
  }
  if (s.tls) options.tls = tlsOptions(s.tls);
  return options;
}

export function createRedisClient(s: RedisSettings): RedisClient {
  const client = newClient(s);
  defineScripts(client);
  return client;
}

function newClient(s: RedisSettings): RedisClient {
  const options = baseOptions(s);
  if (s.topology === 'cluster') {
    const { retryStrategy: _unused, ...redisOptions } = options;
    const clusterOptions: ClusterOptions = {
      redisOptions,
      clusterRetryStrategy: reconnectDelay,
      enableReadyCheck: true,
      maxRedirections: 16,
      slotsRefreshTimeout: s.timeoutMs,
    };
    // A TLS cluster announces IPs; the name check has to follow the node actually dialled.
    if (s.tls && !s.tls.skipHostnameVerification)
      clusterOptions.dnsLookup = (address, callback) => callback(null, address);
    return new Cluster(
      s.nodes.map((n) => ({ host: n.host, port: n.port })),
      { ...clusterOptions, redisOptions: { ...redisOptions, replyMapping: 'legacy' } },
    );
  }
  if (s.topology === 'sentinel') {
    options.sentinels = s.nodes.map((n) => ({ host: n.host, port: n.port }));
    options.name = s.masterName!;
    options.sentinelRetryStrategy = reconnectDelay;
    if (s.sentinelAuth) {
      if (s.sentinelAuth.username !== undefined) options.sentinelUsername = s.sentinelAuth.username;
      options.sentinelPassword = s.sentinelAuth.password;
    }
    if (s.tls) {
      options.enableTLSForSentinelMode = true;
      options.sentinelTLS = tlsOptions(s.tls);
    }
    return new Redis({ ...options, replyMapping: 'legacy' });
  }
  if (s.socketPath !== undefined) {
    options.path = s.socketPath;
  } else {
    options.host = s.nodes[0]!.host;
    options.port = s.nodes[0]!.port;
  }
  return new Redis({ ...options, replyMapping: 'legacy' });
}

export function isReady(client: RedisClient): boolean {
  return client.status === 'ready';
}

/** Resolves true once ready, false after `ms` (the client keeps trying in the background). */
export function waitReady(client: RedisClient, ms: number): Promise<boolean> {
  if (isReady(client)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, ms);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}
