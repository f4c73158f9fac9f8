// The /json exchange in process, bytes to bytes, no sockets: UTF-8 check, JSON.parse, request
// decoding, the decision against the shared memory store, response encoding and the response
// bytes — against JSON.parse + JSON.stringify of the same request bytes (the least a JSON
// endpoint does, as the uws-echo load-test ceiling). The body and rules are the ratelimit-json
// load scenario's, so this suite shows the codec and engine share of that scenario without
// the network.

import { CONFIG, REQUEST } from '../loadtest/scenarios/ratelimit-support/setup.js';
import { compileRuleSet } from '../src/ratelimit/config/compile.js';
import { parseConfigFile } from '../src/ratelimit/config/parse.js';
import { RateLimitEngine } from '../src/ratelimit/engine/engine.js';
import { Decider } from '../src/ratelimit/server/decider.js';
import { answerJson, type JsonAnswer } from '../src/ratelimit/server/json-endpoint.js';
import { decodeRequest, encodeResponse } from '../src/ratelimit/server/json-codec.js';
import { createStatsBuffer, SharedStatsTable } from '../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../src/ratelimit/store/memory.js';
import type { RateLimitResponse } from '../src/ratelimit/types.js';
import type { BenchFile } from './types.js';

const OPS = 64;

const bench: BenchFile = () => {
  const body = Buffer.from(JSON.stringify(REQUEST));
  const stats = new SharedStatsTable(createStatsBuffer(1024));
  const now = Date.UTC(2026, 10, 25, 12, 0, 30);
  const engine = new RateLimitEngine({
    store: new MemoryCounterStore(createMemoryStoreBuffer(1 << 17), 'sliding'),
    stats,
    clock: { nowMs: () => now },
    settings: {
      shadowMode: false,
      quotaMode: false,
      nearLimitRatio: 0.8,
      stopCacheKeyIncrementWhenOverlimit: false,
      cacheKeyPrefix: '',
      responseHeaders: { enabled: false, limit: '', remaining: '', reset: '' },
    },
  });
  engine.setRules(
    compileRuleSet([parseConfigFile('load.yaml', CONFIG)], { mergeDomainConfig: false, nearLimitRatio: 0.8 }),
  );
  const decider = new Decider(engine, stats, 'memory');
  const answered = engine.shouldRateLimit(
    decodeRequest(JSON.parse(body.toString('utf8'))),
  ) as RateLimitResponse;
  let sink = 0;
  return [
    {
      name: 'ratelimit /json in process',
      description:
        'request bytes → response bytes without sockets (two-level descriptor, sliding window, memory store); ceiling = JSON.parse + JSON.stringify of the same bytes',
      ceiling: 'JSON.parse + JSON.stringify (echo)',
      tasks: {
        'JSON.parse + JSON.stringify (echo)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++)
              sink += Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')))).length;
          },
        },
        '/json decision, bytes to bytes': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) {
              const answer = answerJson(decider, body) as JsonAnswer;
              sink += Buffer.from(answer.body).length + answer.status;
            }
          },
        },
        'codec only (decode + encode, no decision)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) {
              const request = decodeRequest(JSON.parse(body.toString('utf8')));
              sink += request.descriptors.length + Buffer.from(encodeResponse(answered)).length;
            }
          },
        },
      },
      teardown: () => {
        if (sink === 0) throw new Error('the bench produced nothing');
      },
    },
  ];
};

export default bench;
