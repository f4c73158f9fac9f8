// The Confluent REST Proxy v2 suite on the JetStream backend (a 3-node cluster, R3): the same
// requests and answers as on LMDB.

import { describe } from 'node:test';
import { natsAvailable } from '../helpers/nats.js';
import { confluentSuite } from './confluent-suite.js';
import { startJetStreamHarness } from './harness.js';

if (natsAvailable) {
  confluentSuite('jetstream', () => startJetStreamHarness());
} else {
  describe(
    'Confluent REST Proxy v2 compatibility (jetstream)',
    { skip: 'nats-server not installed' },
    () => {},
  );
}
