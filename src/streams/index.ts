// The streams service: topic logs, durable produce and consumer groups behind the
// Kafka-REST-style HTTP API. The log is LMDB on this machine (default) or NATS JetStream shared by
// several nodes (STREAMS_BACKEND). Stateful, so the core starts it on front-end thread 0 only.

import { join } from 'node:path';
import { chainAuthenticators, type Authenticator } from '../core/auth/index.js';
import { describeEndpoint } from '../core/banner.js';
import { loggedReserve } from '../core/disk/reserve.js';
import { bindUrl, startHttpServer } from '../core/http/index.js';
import type { RunningService, ServiceContext } from '../core/service.js';
import { consoleCors, mountConsole } from '../core/console/routes.js';
import { ServiceOperations } from '../core/observe/index.js';
import { createTracing } from '../core/tracing/index.js';
import { ConsumerGroups } from './groups/coordinator.js';
import { openGroupStore } from './groups/open.js';
import { streamsErrorBody } from './http/errors.js';
import { buildRouter } from './http/routes.js';
import { JetStreamTopicLog } from './log/jetstream.js';
import { keysBucket, openJetStreamKeyStore, type JetStreamKeyStore } from './nats/key-store.js';
import { LmdbTopicLog } from './log/lmdb.js';
import { Partitioner } from './log/partitioner.js';
import type { TopicLog } from './log/types.js';
import { RetentionRunner } from './retention.js';
import { loadStreamsSettings } from './settings.js';
import { StreamsMetrics } from './observe.js';
import { openStreamsEnvironment } from './storage.js';

export { loadStreamsSettings, type StreamsSettings } from './settings.js';
export { retentionStats } from './retention.js';

export interface StreamsOptions {
  /**
   * The clock consumer instances' idle time and records' age under retention.ms are measured on
   * (default Date.now). Tests move it forward to expire an instance without waiting for
   * STREAMS_INSTANCE_TIMEOUT, or to age records past their topic's retention.ms.
   */
  now?: () => number;
}

export async function startStreams(
  ctx: ServiceContext,
  options: StreamsOptions = {},
): Promise<RunningService> {
  if (ctx.thread.index !== 0) {
    throw new Error(
      'the streams service keeps its state in one event loop and must run on front-end thread 0 only',
    );
  }
  const settings = loadStreamsSettings(ctx.env);
  // The front-end thread's logger names the service already.
  const log = ctx.log;
  const ops = new ServiceOperations({
    service: 'streams',
    settings: ctx.core.observe,
    log,
    thread: { index: ctx.thread.index, serviceThreads: 1 },
  });
  const metrics = new StreamsMetrics(ops);
  const streamsDir = join(ctx.core.dataDir, 'streams');
  const root = openStreamsEnvironment(streamsDir);
  let topicLog: TopicLog;
  try {
    topicLog = metrics.meter(
      settings.nats !== undefined
        ? await JetStreamTopicLog.open(settings.nats, {
            name: 'sluice-streams',
            log,
            onRetry: (error) => log.warn({ err: error.message }, 'JetStream not ready yet; retrying'),
            observe: metrics.jetStreamObserver(),
          })
        : new LmdbTopicLog(root, loggedReserve('streams log', streamsDir, ctx.core.diskReserveBytes, log)),
    );
  } catch (error) {
    await root.close();
    ops.close();
    throw error;
  }
  if (settings.nats !== undefined) {
    log.info(
      { servers: settings.nats.servers, replicas: settings.nats.replicas, prefix: settings.nats.prefix },
      'streams log on NATS JetStream',
    );
  }
  let groupStore;
  try {
    groupStore = await openGroupStore(settings, root, log);
  } catch (error) {
    await topicLog.close();
    await root.close();
    ops.close();
    throw error;
  }
  // On JetStream the API keys are the cluster's (a KV bucket every node follows), then this
  // node's own (LMDB keys and SLUICE_ADMIN_TOKEN).
  let keys: JetStreamKeyStore | undefined;
  let authenticator: Authenticator = ctx.auth;
  if (settings.nats !== undefined) {
    try {
      keys = await openJetStreamKeyStore(settings.nats, {
        name: `sluice-streams-keys-${settings.nodeId}`,
        follow: true,
        onError: (what, error) => log.warn({ err: error }, `API keys: ${what} failed`),
        log,
      });
    } catch (error) {
      await groupStore.close();
      await topicLog.close();
      await root.close();
      throw error;
    }
    authenticator = chainAuthenticators(keys, ctx.auth);
    log.info({ bucket: keysBucket(settings.nats) }, 'API keys shared through JetStream');
  }
  const tracing = createTracing(settings.tracing, 'sluice-streams');
  const groups = new ConsumerGroups(
    topicLog,
    groupStore,
    {
      maxInstancesPerGroup: settings.maxInstancesPerGroup,
      instanceTimeoutMs: settings.instanceTimeoutMs,
    },
    options.now,
  );

  let url = '';
  const router = buildRouter({
    log: topicLog,
    groups,
    settings,
    partitioner: new Partitioner(),
    baseUrl: () => url,
    tracing,
  });
  // The console's sign-in (whoami) accepts the same keys as the API.
  ops.mount(router);
  ops.readiness.register(settings.nats !== undefined ? 'nats' : 'lmdb', () => topicLog.probe());
  metrics.watchLag(topicLog, groups);
  mountConsole(router, { self: 'streams', ctx: { ...ctx, auth: authenticator } });
  const cors = consoleCors('streams', ctx);
  let server;
  try {
    server = await startHttpServer({
      name: 'streams',
      host: ctx.core.streams.host,
      port: ctx.core.streams.port,
      router,
      errorBody: streamsErrorBody,
      maxBodyBytes: settings.maxBodyBytes,
      authenticator,
      defaultScope: 'streams:read',
      log,
      transport: ctx.core.httpTransport,
      observer: ops.observer,
      ...(cors ? { cors } : {}),
    });
  } catch (error) {
    groups.close();
    await tracing.close();
    await keys?.close();
    await groupStore.close();
    await topicLog.close();
    await root.close();
    ops.close();
    throw error;
  }
  url = server.url;
  ctx.directory?.publish('streams', server.port);

  const expiry = setInterval(
    () => {
      for (const instance of groups.expireIdle()) {
        log.info(
          { group: instance.group, instance: instance.id },
          'consumer instance expired after STREAMS_INSTANCE_TIMEOUT idle',
        );
      }
    },
    Math.min(1000, Math.max(10, Math.floor(settings.instanceTimeoutMs / 4))),
  );
  expiry.unref();

  const retention = new RetentionRunner(topicLog, {
    intervalMs: settings.retentionCheckIntervalMs,
    now: options.now ?? Date.now,
    log,
  });
  retention.start();

  ctx.health.register('streams', true);
  log.info({ url: server.url }, 'streams listening');

  let closing: Promise<void> | undefined;
  return {
    name: 'streams',
    addresses: { http: bindUrl(server.host, server.port) },
    backends:
      settings.nats !== undefined
        ? { log: `NATS JetStream ${settings.nats.servers.map(describeEndpoint).join(', ')}` }
        : { log: `LMDB ${streamsDir}` },
    beginShutdown() {
      ctx.health.set('streams', false);
      ops.beginShutdown();
    },
    close() {
      closing ??= (async () => {
        ops.beginShutdown();
        clearInterval(expiry);
        await retention.stop();
        groups.close();
        await server.close(ctx.core.shutdownGraceMs);
        await groups.flush().catch((error: unknown) => {
          log.warn({ err: error }, 'consumer group state not stored before shutdown');
        });
        await keys?.close();
        await groupStore.close();
        await topicLog.close();
        await root.close();
        await tracing.close();
        ops.close();
        ctx.health.unregister('streams');
      })();
      return closing;
    },
  };
}
