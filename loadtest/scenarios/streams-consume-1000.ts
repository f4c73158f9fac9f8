// Consume over HTTP in the same batch size as the 1000-record produce scenarios: a stateless
// partition read of 1000 records of ~100 B from a preloaded partition (records/s = req/s × 1000).
// See streams-consume.ts for why the stateless read is used.
import type { Scenario } from '../types.js';
import { streamsServer, TOKEN, TOPIC } from './streams-support/setup.js';

const scenario: Scenario = {
  description:
    'consume: GET 1000 records of ~100 B per request from a preloaded partition (records/s = req/s × 1000)',
  ceiling: 'uws-hello',
  load: {
    kind: 'http',
    method: 'GET',
    path: `/streams/topics/${TOPIC}/partitions/0/records?offset=0&count=1000`,
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/vnd.streams.json.v2+json' },
    okStatus: [200],
  },
  server: streamsServer(10_000, 100),
};

export default scenario;
