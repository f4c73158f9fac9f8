// NatsSettings for tests that open a JetStreamTopicLog directly (without the environment).
import type { NatsSettings } from '../../src/streams/settings.js';

export function natsSettings(urls: string[], overrides: Partial<NatsSettings> = {}): NatsSettings {
  return {
    servers: urls,
    user: undefined,
    password: undefined,
    token: undefined,
    credsFile: undefined,
    tls: undefined,
    replicas: 3,
    prefix: 'sluicetest',
    timeoutMs: 5_000,
    ...overrides,
  };
}
