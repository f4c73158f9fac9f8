import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Code, MAX_UINT32, RateLimitRequestError, Unit } from '../../src/ratelimit/types.js';
import { decide, fixture, makeEngine, req, rulesFrom, T0 } from './helpers.js';

const rules = () => rulesFrom({ 'config.basic.yaml': fixture('basic.yaml') });
const D = 'test-domain';
const RULE = 'ratelimit.service.rate_limit.test-domain.';

describe('ratelimit engine: decision rules of the spec', () => {
  it('service errors: empty domain, no descriptors, no configuration', () => {
    const { engine } = makeEngine(rules());
    assert.throws(
      () => engine.shouldRateLimit(req('')),
      (e: unknown) =>
        e instanceof RateLimitRequestError && e.message === 'rate limit domain must not be empty',
    );
    assert.throws(() => engine.shouldRateLimit(req(D)), /rate limit descriptor list must not be empty/);
    const empty = makeEngine(undefined).engine;
    assert.throws(() => empty.shouldRateLimit(req(D, [['key2', 'x']])), /no rate limit configuration loaded/);
  });

  it('rule 1: depth must equal the number of entries', () => {
    const { engine } = makeEngine(rules());
    // key1_value1 has only a child rule: one entry matches no rule at that node, and the key-only
    // sibling is not tried (no backtracking).
    assert.deepEqual(decide(engine, req(D, [['key1', 'value1']])).statuses[0], {
      code: Code.OK,
      limitRemaining: 0,
    });
    const two = decide(
      engine,
      req(D, [
        ['key1', 'value1'],
        ['subkey1', 'x'],
      ]),
    ).statuses[0]!;
    assert.equal(two.currentLimit?.requestsPerUnit, 5);
    assert.equal(two.currentLimit?.unit, Unit.SECOND);
    // deeper than the config: no limit
    assert.equal(
      decide(
        engine,
        req(D, [
          ['key2', 'a'],
          ['more', 'b'],
        ]),
      ).statuses[0]!.currentLimit,
      undefined,
    );
  });

  it('rule 2: key+value is tried before key alone; a whitelisted value beats the key-only rule', () => {
    const { engine } = makeEngine(rules());
    const other = decide(engine, req(D, [['key1', 'other']])).statuses[0]!;
    assert.equal(other.currentLimit?.requestsPerUnit, 3);
    assert.deepEqual(decide(engine, req(D, [['key2', 'whitelisted']])).statuses[0], {
      code: Code.OK,
      limitRemaining: 0,
    });
  });

  it('rule 3 and the counting edge: OK at exactly N with remaining 0, N+1 over; overall is the OR', () => {
    const { engine, stats } = makeEngine(rules());
    const r = (_n: number) => decide(engine, req(D, [['key1', 'v']], [['key2', 'v']]));
    for (let i = 1; i <= 3; i++) {
      const res = r(i);
      assert.equal(res.overallCode, Code.OK);
      assert.equal(res.statuses[0]!.limitRemaining, 3 - i);
      assert.equal(res.statuses[0]!.durationUntilReset, 60);
    }
    const over = r(4);
    assert.equal(over.overallCode, Code.OVER_LIMIT);
    assert.equal(over.statuses[0]!.code, Code.OVER_LIMIT);
    assert.equal(over.statuses[0]!.limitRemaining, 0);
    assert.equal(over.statuses[1]!.code, Code.OK);
    assert.equal(over.statuses[1]!.limitRemaining, 16);
    assert.equal(stats.get(RULE + 'key1.total_hits'), 4);
    assert.equal(stats.get(RULE + 'key1.over_limit'), 1);
    assert.equal(stats.get(RULE + 'key1.within_limit'), 3);
    // nearThreshold = floor(3*0.8) = 2: the third hit is near
    assert.equal(stats.get(RULE + 'key1.near_limit'), 1);
  });

  it('rule 4: requests_per_unit 0 rejects every request', () => {
    const { engine } = makeEngine(rules());
    const s = decide(engine, req(D, [['zero', 'a']])).statuses[0]!;
    assert.equal(s.code, Code.OVER_LIMIT);
    assert.equal(s.durationUntilReset, 3600);
  });

  it('rule 5: unlimited answers without the store: OK, remaining 4294967295, no limit, stats still counted', () => {
    const { engine, stats, store } = makeEngine(rules());
    const s = decide(engine, req(D, [['free', 'a']])).statuses[0]!;
    assert.deepEqual(s, { code: Code.OK, limitRemaining: MAX_UINT32 });
    assert.equal(store.stats().keys, 0);
    assert.equal(stats.get(RULE + 'free.total_hits'), 1);
  });

  it('rule 6: a key-only entry keeps one counter per runtime value', () => {
    const { engine } = makeEngine(rules());
    for (let i = 0; i < 3; i++) decide(engine, req(D, [['key1', 'a']]));
    assert.equal(decide(engine, req(D, [['key1', 'a']])).statuses[0]!.code, Code.OVER_LIMIT);
    assert.equal(decide(engine, req(D, [['key1', 'b']])).statuses[0]!.limitRemaining, 2);
  });

  it('rule 7: wildcards anywhere, segments in order, one counter per value', () => {
    const { engine, stats } = makeEngine(rules());
    for (const v of ['foo123bar456baz', 'foobarbaz'])
      assert.equal(decide(engine, req(D, [['wild', v]])).statuses[0]!.currentLimit?.requestsPerUnit, 2);
    assert.equal(decide(engine, req(D, [['wild', 'foo123baz']])).statuses[0]!.currentLimit, undefined);
    for (const v of ['barab', 'bar123b', 'barb'])
      assert.ok(decide(engine, req(D, [['mid', v]])).statuses[0]!.currentLimit);
    for (const v of ['bara', 'xbarb'])
      assert.equal(decide(engine, req(D, [['mid', v]])).statuses[0]!.currentLimit, undefined);
    assert.equal(decide(engine, req(D, [['wild', 'foobarbaz']])).statuses[0]!.limitRemaining, 0);
    assert.equal(decide(engine, req(D, [['wild', 'fooXbarbaz']])).statuses[0]!.limitRemaining, 1);
    // metric keys: the pattern without value_to_metric, the runtime value with it
    assert.equal(stats.get(RULE + 'wild_foo*bar*baz.total_hits'), 4);
    assert.equal(stats.get(RULE + 'mid_barab.total_hits'), 1);
  });

  it('rule 8: share_threshold makes all matching values share one counter (metric key keeps the pattern)', () => {
    const { engine, stats } = makeEngine(rules());
    assert.equal(decide(engine, req(D, [['files', 'files/a.pdf']])).statuses[0]!.limitRemaining, 1);
    assert.equal(decide(engine, req(D, [['files', 'files/b.pdf']])).statuses[0]!.limitRemaining, 0);
    assert.equal(decide(engine, req(D, [['files', 'files/c.pdf']])).statuses[0]!.code, Code.OVER_LIMIT);
    assert.equal(stats.get(RULE + 'files_files/*.total_hits'), 3);
  });

  it('rule 9: a replacing rule drops the replaced rule and leaves its counter alone', () => {
    const { engine } = makeEngine(rules());
    const both = decide(engine, req(D, [['base', 'x']], [['special', 'y']]));
    assert.deepEqual(both.statuses[0], { code: Code.OK, limitRemaining: 0 });
    assert.equal(both.statuses[1]!.limitRemaining, 9);
    // the named rule alone counts from 1 again (untouched), and echoes its name
    const alone = decide(engine, req(D, [['base', 'x']])).statuses[0]!;
    assert.equal(alone.limitRemaining, 0);
    assert.equal(alone.code, Code.OK);
    assert.equal(alone.currentLimit?.name, 'base-rule');
    assert.equal(decide(engine, req(D, [['base', 'x']])).statuses[0]!.code, Code.OVER_LIMIT);
  });

  it('rule 10: a shadow rule runs normally but answers OK, counting shadow_mode', () => {
    const { engine, stats } = makeEngine(rules());
    decide(engine, req(D, [['shadow', 'x']]));
    const res = decide(engine, req(D, [['shadow', 'x']]));
    assert.equal(res.overallCode, Code.OK);
    assert.deepEqual(res.statuses[0], {
      code: Code.OK,
      currentLimit: { requestsPerUnit: 1, unit: Unit.MINUTE, name: '' },
      limitRemaining: 0,
      durationUntilReset: 60,
    });
    assert.equal(stats.get(RULE + 'shadow.shadow_mode'), 1);
    assert.equal(stats.get(RULE + 'shadow.over_limit'), 1);
  });

  it('rule 11: global shadow mode turns the overall OVER_LIMIT into OK, keeps statuses, counts it', () => {
    const { engine, stats } = makeEngine(rules(), { settings: { shadowMode: true } });
    const res = decide(engine, req(D, [['zero', 'a']]));
    assert.equal(res.overallCode, Code.OK);
    assert.equal(res.statuses[0]!.code, Code.OVER_LIMIT);
    assert.equal(stats.get('ratelimit.service.global_shadow_mode'), 1);
  });

  it('unknown domain and unknown descriptors are OK without limits', () => {
    const { engine, stats } = makeEngine(rules());
    const res = decide(engine, req('nope', [['key1', 'a']]));
    assert.deepEqual(res, {
      overallCode: Code.OK,
      statuses: [{ code: Code.OK, limitRemaining: 0 }],
      responseHeadersToAdd: [],
    });
    assert.equal(stats.get('ratelimit.service.rate_limit.nope.domain_not_found'), 1);
    assert.equal(decide(engine, req(D, [['nokey', 'a']])).statuses[0]!.currentLimit, undefined);
    assert.equal(
      decide(engine, { domain: D, descriptors: [{ entries: [] }] }).statuses[0]!.currentLimit,
      undefined,
    );
  });

  it('hits_addend: request level (0 → 1), per descriptor (0 checks without consuming)', () => {
    const { engine, stats } = makeEngine(rules());
    const res = decide(engine, {
      domain: D,
      hitsAddend: 15,
      descriptors: [{ entries: [{ key: 'key2', value: 'h' }] }],
    });
    assert.equal(res.statuses[0]!.limitRemaining, 5);
    assert.equal(
      decide(engine, { domain: D, hitsAddend: 0, descriptors: [{ entries: [{ key: 'key2', value: 'h' }] }] })
        .statuses[0]!.limitRemaining,
      4,
    );
    const peek = decide(engine, {
      domain: D,
      descriptors: [{ entries: [{ key: 'key2', value: 'h' }], hitsAddend: 0 }],
    });
    assert.equal(peek.statuses[0]!.limitRemaining, 4);
    const big = decide(engine, {
      domain: D,
      descriptors: [{ entries: [{ key: 'key2', value: 'h' }], hitsAddend: 10 }],
    });
    assert.equal(big.statuses[0]!.code, Code.OVER_LIMIT);
    // crossing with h > 1: over_limit gets the part past N, near_limit the part between threshold and N
    assert.equal(stats.get(RULE + 'key2.over_limit'), 6);
    assert.equal(stats.get(RULE + 'key2.total_hits'), 26);
  });

  it('request limit override wins over the config, keyed by its unit; unknown domain ignores it; unit 0 refused', () => {
    const { engine, stats } = makeEngine(rules());
    const o = (rpu: number, unit: number) => ({
      domain: D,
      descriptors: [
        {
          entries: [
            { key: 'key1', value: 'value1' },
            { key: 'subkey1', value: 'something' },
          ],
          limit: { requestsPerUnit: rpu, unit },
        },
      ],
    });
    const s = decide(engine, o(42, Unit.HOUR)).statuses[0]!;
    assert.deepEqual(s.currentLimit, { requestsPerUnit: 42, unit: Unit.HOUR, name: '' });
    assert.equal(s.limitRemaining, 41);
    assert.equal(decide(engine, o(50, Unit.HOUR)).statuses[0]!.limitRemaining, 48);
    assert.equal(stats.get(RULE + 'key1_value1.subkey1_something.total_hits'), 2);
    assert.equal(
      decide(engine, { ...o(1, Unit.HOUR), domain: 'other' }).statuses[0]!.currentLimit,
      undefined,
    );
    assert.throws(() => engine.shouldRateLimit(o(1, 0)), /invalid rate limit unit 0/);
  });

  it('STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: the upstream worked example', () => {
    const { engine, stats } = makeEngine(rules(), { settings: { stopCacheKeyIncrementWhenOverlimit: true } });
    const r = () => decide(engine, req(D, [['key2', 'k']], [['key3', 'k']]));
    for (let i = 1; i <= 10; i++) {
      const res = r();
      assert.equal(res.statuses[0]!.limitRemaining, 20 - i);
      assert.equal(res.statuses[1]!.limitRemaining, 10 - i);
    }
    for (let i = 11; i <= 13; i++) {
      const res = r();
      assert.equal(res.statuses[1]!.code, Code.OVER_LIMIT);
      assert.equal(res.statuses[0]!.code, Code.OK);
      assert.equal(res.statuses[0]!.limitRemaining, 10);
    }
    assert.equal(stats.get(RULE + 'key2.total_hits'), 13);
  });

  it('detailed_metric writes runtime values into the metric key', () => {
    const { engine, stats } = makeEngine(rules());
    decide(engine, req(D, [['detailed', 'unspecified_value']]));
    assert.equal(stats.get(RULE + 'detailed_unspecified_value.total_hits'), 1);
  });

  it('quota mode: a quota rule over its limit does not make the overall OVER_LIMIT on its own… unless all quota statuses are over', () => {
    const { engine } = makeEngine(rules());
    decide(engine, req(D, [['quota', 'q']]));
    const res = decide(engine, req(D, [['quota', 'q']], [['key2', 'q']]));
    assert.equal(res.statuses[0]!.code, Code.OVER_LIMIT);
    // every quota-mode status is over → the reference's rule makes the overall over
    assert.equal(res.overallCode, Code.OVER_LIMIT);
  });

  it('response headers: the last OVER_LIMIT status, else the smallest remaining', () => {
    const { engine, clock } = makeEngine(rules(), {
      settings: { responseHeaders: { enabled: true, limit: 'X-L', remaining: 'X-R', reset: 'X-Reset' } },
    });
    clock.set(T0 + 2_500);
    const ok = decide(engine, req(D, [['key2', 'h']], [['key1', 'h']]));
    assert.deepEqual(ok.responseHeadersToAdd, [
      { key: 'X-L', value: '3' },
      { key: 'X-R', value: '2' },
      { key: 'X-Reset', value: '58' },
    ]);
    const over = decide(engine, req(D, [['zero', 'h']], [['key2', 'h']]));
    assert.deepEqual(
      over.responseHeadersToAdd.map((h) => h.value),
      ['0', '0', '3598'],
    );
    assert.deepEqual(decide(engine, req(D, [['none', 'h']])).responseHeadersToAdd, []);
  });

  it('durationUntilReset counts down to the epoch-aligned window end; WEEK windows start on Thursday', () => {
    const { engine, clock } = makeEngine(rules());
    clock.set(T0 + 59_999);
    assert.equal(decide(engine, req(D, [['key2', 'd']])).statuses[0]!.durationUntilReset, 1);
    const weekStart = Math.floor(T0 / 604_800_000) * 604_800_000;
    assert.equal(new Date(weekStart).getUTCDay(), 4);
    clock.set(weekStart);
    assert.equal(decide(engine, req(D, [['weekly', 'd']])).statuses[0]!.durationUntilReset, 604_800);
  });

  it('a full counter table lets the request through, visibly', () => {
    const { engine, store, untracked } = makeEngine(rules(), { maxKeys: 16 });
    let passed = 0;
    for (let i = 0; i < 200; i++) {
      const s = decide(engine, req(D, [['zero', `v${i}`]])).statuses[0]!;
      if (s.code === Code.OK) {
        passed++;
        assert.equal(s.currentLimit?.requestsPerUnit, 0);
      }
    }
    assert.equal(passed, 200 - 16);
    assert.equal(untracked(), passed);
    assert.equal(store.stats().fullEvents, passed);
  });

  it('composite keys alias like upstream: config key `a_b` matches request key `a` with value `b`', () => {
    const { engine } = makeEngine(
      rulesFrom({
        'alias.yaml':
          'domain: al\ndescriptors:\n  - key: a_b\n    rate_limit: { unit: minute, requests_per_unit: 7 }\n',
      }),
    );
    assert.equal(decide(engine, req('al', [['a', 'b']])).statuses[0]!.currentLimit?.requestsPerUnit, 7);
    assert.equal(decide(engine, req('al', [['a', 'c']])).statuses[0]!.currentLimit, undefined);
  });
});
