import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

const script =
  "import('./src/core/log.ts').then((m) => { const l = m.createLogger('t'); l.debug('hidden'); l.warn({ k: 1 }, 'shown'); })";

function run(env: Record<string, string>, code = script) {
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

describe('logging', () => {
  it('LOG_FORMAT=json writes the @message, @timestamp and level fields to stderr', () => {
    const out = run({ LOG_FORMAT: 'json', LOG_LEVEL: 'info' });
    assert.equal(out.stdout, '');
    const lines = out.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 1, 'debug is below LOG_LEVEL=info');
    assert.equal(lines[0]!['@message'], 'shown');
    assert.equal(lines[0]!.level, 'warn');
    assert.ok(!Number.isNaN(Date.parse(String(lines[0]!['@timestamp']))));
    assert.equal(lines[0]!.k, 1);
  });

  it('text format is one readable line; LOG_LEVEL=debug shows debug', () => {
    const out = run({ LOG_FORMAT: 'text', LOG_LEVEL: 'debug' });
    assert.match(out.stderr, /DEBUG \[t\] hidden/);
    assert.match(out.stderr, /WARN \[t\] shown \{"k":1\}/);
  });

  it('a configured thread logs with the settings it was handed, not the environment', () => {
    const configured =
      "import('./src/core/log.ts').then((m) => { m.configureLogging({ level: 'debug', format: 'json' }); m.createLogger('t').debug('seen'); })";
    const out = run({ LOG_FORMAT: 'text', LOG_LEVEL: 'error' }, configured);
    const line = JSON.parse(out.stderr.trim()) as Record<string, unknown>;
    assert.equal(line['@message'], 'seen');
    assert.equal(line.level, 'debug');
  });
});
