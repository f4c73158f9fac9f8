// The streams service: topic logs, durable produce and consumer groups behind the
// Kafka-REST-style HTTP API. The log is LMDB on this machine (default) or NATS JetStream shared by
// several nodes (STREAMS_BACKEND). Stateful, so the core starts it on front-end thread 0 only.

import { join } from 'node:path';
import { describeEndpoint } from '../core/banner.js';
import { bindUrl, startHttpServer } from '../core/http/index.js';
import type { RunningService, ServiceContext } from '../core/service.js';
import { consoleCors, mountConsole } from '../core/console/routes.js';
import { ConsumerGroups } from './groups/coordinator.js';
import { openGroupStore } from './groups/open.js';
import { streamsErrorBody } from './http/errors.js';
import { buildRouter } from './http/routes.js';
import { JetStreamTopicLog } from './log/jetstream.js';
import { LmdbTopicLog } from './log/lmdb.js';
import { Partitioner } from './log/partitioner.js';
import type { TopicLog } from './log/types.js';
import { loadStreamsSettings } from './settings.js';
import { openStreamsEnvironment } from './storage.js';

export { loadStreamsSettings, type StreamsSettings } from './settings.js';

export interface StreamsOptions {
  /**
   * The clock consumer instances' idle time is measured on (default Date.now). Tests move it
   * forward to expire an instance without waiting for STREAMS_INSTANCE_TIMEOUT to pass.
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
  const log = ctx.log.child({ service: 'streams' });
  const streamsDir = join(ctx.core.dataDir, 'streams');
  const root = openStreamsEnvironment(streamsDir);
  let topicLog: TopicLog;
  try {
    topicLog =
      settings.nats !== undefined
        ? await JetStreamTopicLog.open(settings.nats, {
            name: 'sluice-streams',
            onRetry: (error) => log.warn({ err: error.message }, 'JetStream not ready yet; retrying'),
          })
        : new LmdbTopicLog(root);
  } catch (error) {
    await root.close();
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
    throw error;
  }
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
  });
  mountConsole(router, { self: 'streams', ctx });
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
      authenticator: ctx.auth,
      defaultScope: 'streams:read',
      log,
      transport: ctx.core.httpTransport,
      ...(cors ? { cors } : {}),
    });
  } catch (error) {
    groups.close();
    await groupStore.close();
    await topicLog.close();
    await root.close();
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
    },
    close() {
      closing ??= (async () => {
        clearInterval(expiry);
        groups.close();
        await server.close(ctx.core.shutdownGraceMs);
        await groups.flush().catch((error: unknown) => {
          log.warn({ err: error }, 'consumer group state not stored before shutdown');
        });
        await groupStore.close();
        await topicLog.close();
        await root.close();
        ctx.health.unregister('streams');
      })();
      return closing;
    },
  };
}
