// Picks the group-state store for the configured backend: the LMDB environment of this node, or
// a JetStream key-value bucket shared by every node of the cluster (its own NATS connection, so
// heartbeats do not queue behind large log reads).

import type { Logger } from '../../core/log.js';
import { connectNats } from '../nats/connection.js';
import type { StreamsSettings } from '../settings.js';
import { JetStreamGroupStore } from './jetstream-store.js';
import { LmdbGroupStore } from './lmdb-store.js';
import type { GroupStore } from './store.js';

export async function openGroupStore(
  settings: StreamsSettings,
  root: ConstructorParameters<typeof LmdbGroupStore>[0],
  log: Logger,
): Promise<GroupStore> {
  if (settings.nats === undefined) return new LmdbGroupStore(root, settings.nodeId);
  const nc = await connectNats(settings.nats, `sluice-streams-groups-${settings.nodeId}`, log);
  let store: JetStreamGroupStore;
  try {
    store = await JetStreamGroupStore.open({
      nc,
      nodeId: settings.nodeId,
      replicas: settings.nats.replicas,
      heartbeatMs: settings.nodeHeartbeatMs,
      nodeTimeoutMs: settings.nodeTimeoutMs,
      bucket: `${settings.nats.prefix}_groups`,
      ...(settings.publicUrl !== undefined ? { url: settings.publicUrl } : {}),
      timeoutMs: settings.nats.timeoutMs,
      ownsConnection: true,
      onError: (what, error) => log.warn({ err: error }, `consumer group state: ${what} failed`),
    });
  } catch (error) {
    await nc.close().catch(() => undefined);
    throw error;
  }
  log.info(
    { node: settings.nodeId, bucket: `${settings.nats.prefix}_groups` },
    'consumer groups shared through JetStream',
  );
  return store;
}
