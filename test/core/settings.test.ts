import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import {
  EnvReader,
  loadCoreSettings,
  loadLogSettings,
  parseDuration,
  SettingsError,
} from '../../src/core/settings/index.js';

describe('settings', () => {
  it('parses durations in the Go style', () => {
    assert.equal(parseDuration('10s'), 10_000);
    assert.equal(parseDuration('1m'), 60_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('250us'), 0.25);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('3'), 3000);
    for (const bad of ['', 'ten', '10x', 's', '-1s', '10 s'])
      assert.equal(parseDuration(bad), undefined, bad);
  });

  it('reads typed values with defaults', () => {
    const env = new EnvReader({
      N: '42',
      F: '0.5',
      B: 'TRUE',
      D: '2m',
      E: 'fixed',
      L: 'a, b,,c',
      P: '<k1:v1>,<k2:v:2>',
    });
    assert.equal(env.int('N', 1), 42);
    assert.equal(env.int('MISSING', 7), 7);
    assert.equal(env.float('F', 1), 0.5);
    assert.equal(env.bool('B', false), true);
    assert.equal(env.duration('D', 1), 120_000);
    assert.equal(env.enumeration('E', ['sliding', 'fixed'] as const, 'sliding'), 'fixed');
    assert.deepEqual(env.list('L'), ['a', 'b', 'c']);
    assert.deepEqual(env.pairs('P'), { k1: 'v1', k2: 'v:2' });
    assert.deepEqual(env.pairs('MISSING'), {});
  });

  it('takes the first alias that is set', () => {
    const env = new EnvReader({ REDIS_URL: 'old:1', EMPTY: '' });
    assert.equal(env.string(['KVSTORE_URL', 'REDIS_URL'], 'x'), 'old:1');
    assert.equal(env.string(['EMPTY'], 'fallback'), 'fallback');
  });

  it('names the variable and the value on a bad value', () => {
    const cases: [() => unknown, string][] = [
      [() => new EnvReader({ X: '4x' }).int('X', 0), 'X="4x"'],
      [() => new EnvReader({ X: '70000' }).int('X', 0, { max: 65535 }), 'X="70000"'],
      [() => new EnvReader({ X: 'maybe' }).bool('X', false), 'X="maybe"'],
      [() => new EnvReader({ X: '10 parsecs' }).duration('X', 0), 'X="10 parsecs"'],
      [() => new EnvReader({ X: 'both' }).enumeration('X', ['a', 'b'] as const, 'a'), 'X="both"'],
      [() => new EnvReader({ X: 'nocolon' }).pairs('X'), 'X="nocolon"'],
      [() => new EnvReader({ X: 'NaN' }).float('X', 0), 'X="NaN"'],
    ];
    for (const [read, text] of cases) {
      assert.throws(
        read,
        (error: unknown) => error instanceof SettingsError && error.message.includes(text),
        text,
      );
    }
  });

  it('builds frozen core settings with the documented defaults', () => {
    const core = loadCoreSettings(new EnvReader({}));
    assert.ok(Object.isFrozen(core));
    assert.equal(core.streams.port, 8082);
    assert.equal(core.automation.port, 8083);
    assert.equal(core.streams.host, '0.0.0.0');
    assert.ok(core.dataDir.endsWith('/data'));
    assert.ok(core.threads >= 1);
    assert.throws(() => loadCoreSettings(new EnvReader({ STREAMS_PORT: 'http' })), /STREAMS_PORT/);
    assert.throws(() => loadCoreSettings(new EnvReader({ SLUICE_THREADS: '0' })), /SLUICE_THREADS/);
    assert.throws(() => loadCoreSettings(new EnvReader({ LOG_FORMAT: 'xml' })), /LOG_FORMAT/);
  });

  it('reads the log settings once, with the upstream alias warning for warn', () => {
    assert.deepEqual(loadCoreSettings(new EnvReader({})).log, { level: 'info', format: 'text' });
    assert.deepEqual(loadLogSettings(new EnvReader({ LOG_LEVEL: 'warning', LOG_FORMAT: 'json' })), {
      level: 'warn',
      format: 'json',
    });
    assert.throws(() => loadLogSettings(new EnvReader({ LOG_LEVEL: 'loud' })), /LOG_LEVEL/);
  });
});
