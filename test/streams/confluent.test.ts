// Confluent REST Proxy v2 compatibility on the default (LMDB) backend; the suite itself is in
// confluent-suite.ts so other backends run the same requests.

import { confluentSuite } from './confluent-suite.js';
import { startHarness } from './harness.js';

confluentSuite('lmdb', () => startHarness());
