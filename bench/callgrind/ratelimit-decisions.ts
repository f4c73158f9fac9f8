// Instruction-count driver for the rate limit hot paths (not a tinybench file: bench/run.ts
// loads only *.bench.ts). Runs `warm` decisions, then `n` more, of one shape:
//   two   engine, two-level descriptor with a wildcard (user / route), sliding window
//   one   engine, one-level key-only descriptor (remote_address), sliding window
//   json  /json in process: request bytes → answerJson → response bytes
// Instruction counts do not depend on machine load, so two runs under callgrind that differ
// only in `n` give instructions per decision (docs/benchmarks.md, "Instruction counts").
//
//   node bench/callgrind/ratelimit-decisions.ts is not run directly; bundle it first:
//   npx esbuild bench/callgrind/ratelimit-decisions.ts --bundle --platform=node --format=cjs \
//     --external:uWebSockets.js --outfile=/tmp/rl-decisions.cjs
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all-non-file \
//     node --single-threaded /tmp/rl-decisions.cjs <shape> <n> <warm>

import { compileRuleSet } from '../../src/ratelimit/config/compile.js';
import { parseConfigFile } from '../../src/ratelimit/config/parse.js';
import { RateLimitEngine } from '../../src/ratelimit/engine/engine.js';
import { Decider } from '../../src/ratelimit/server/decider.js';
import { answerJson, type JsonAnswer } from '../../src/ratelimit/server/json-endpoint.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../src/ratelimit/store/memory.js';
import type { RateLimitRequest, RateLimitResponse } from '../../src/ratelimit/types.js';

const CONFIG = `
domain: bench
descriptors:
  - key: remote_address
    rate_limit: { unit: second, requests_per_unit: 1000000000 }
  - key: user
    descriptors:
      - key: route
        value: /api/*
        rate_limit: { unit: minute, requests_per_unit: 1000000000 }
`;

const [shape = 'two', nArg = '100000', warmArg = '300000'] = process.argv.slice(2);
const rules = compileRuleSet([parseConfigFile('bench.yaml', CONFIG)], {
  mergeDomainConfig: false,
  nearLimitRatio: 0.8,
});
const now = Date.UTC(2026, 10, 25, 12, 0, 30);
const stats = new SharedStatsTable(createStatsBuffer(1024));
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
engine.setRules(rules);
const decider = new Decider(engine, stats, 'memory');
const two: RateLimitRequest[] = Array.from({ length: 1000 }, (_, i) => ({
  domain: 'bench',
  descriptors: [
    {
      entries: [
        { key: 'user', value: `u${i}` },
        { key: 'route', value: `/api/items/${i % 7}` },
      ],
    },
  ],
}));
const one: RateLimitRequest[] = Array.from({ length: 1000 }, (_, i) => ({
  domain: 'bench',
  descriptors: [{ entries: [{ key: 'remote_address', value: `10.0.${i >> 8}.${i & 255}` }] }],
}));
const bodies = two.map((r) => Buffer.from(JSON.stringify(r)));

let sink = 0;
function run(n: number): void {
  if (shape === 'two') {
    for (let i = 0; i < n; i++)
      sink += (engine.shouldRateLimit(two[i % 1000]!) as RateLimitResponse).statuses.length;
  } else if (shape === 'one') {
    for (let i = 0; i < n; i++)
      sink += (engine.shouldRateLimit(one[i % 1000]!) as RateLimitResponse).statuses.length;
  } else if (shape === 'json') {
    for (let i = 0; i < n; i++) {
      const answer = answerJson(decider, bodies[i % 1000]!) as JsonAnswer;
      sink += Buffer.from(answer.body).length + answer.status;
    }
  } else {
    throw new Error(`unknown shape ${shape} (two, one, json)`);
  }
}
run(Number(warmArg));
run(Number(nArg));
if (sink === 0) throw new Error('no decisions');
