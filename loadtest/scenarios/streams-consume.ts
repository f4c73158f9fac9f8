// Consume over HTTP: a stateless partition read of 100 records of ~100 B from a preloaded
// partition (records/s = req/s × 100). A stateless read is used because a consumer instance's
// position moves with every fetch, so a fixed preload would run dry during the run and the
// later empty answers would inflate the figure; the group path's extra cost (position and
// auto-commit bookkeeping) is covered by the streams benches and the integration tests.
import type { Scenario } from '../types.js';
import { streamsServer, TOKEN, TOPIC } from './streams-support/setup.js';

const scenario: Scenario = {
  description:
    'consume: GET 100 records of ~100 B per request from a preloaded partition (records/s = req/s × 100)',
  ceiling: 'uws-hello',
  load: {
    kind: 'http',
    method: 'GET',
    path: `/streams/topics/${TOPIC}/partitions/0/records?offset=0&count=100`,
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/vnd.streams.json.v2+json' },
    okStatus: [200],
  },
  server: streamsServer(10_000, 100),
};

export default scenario;
