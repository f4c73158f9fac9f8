import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EnvReader, SettingsError } from '../../src/core/settings/index.js';
import { scriptPoolOptionsFromEnv } from '../../src/automation/evals/index.js';

describe('scriptPoolOptionsFromEnv', () => {
  it('has defaults', () => {
    assert.deepEqual(scriptPoolOptionsFromEnv(new EnvReader({})), {
      maxThreads: 1,
      defaultMemoryLimitMb: 64,
      graceMs: 2000,
      idleTimeoutMs: 30_000,
      patternTimeoutMs: 1000,
      customScripts: true,
    });
  });

  it('reads every setting', () => {
    const env = new EnvReader({
      AUTOMATION_EVAL_THREADS: '2',
      AUTOMATION_EVAL_MEMORY_MB: '128',
      AUTOMATION_EVAL_KILL_GRACE: '500ms',
      AUTOMATION_EVAL_IDLE_TIMEOUT: '1m',
      AUTOMATION_PATTERN_TIMEOUT: '250ms',
      AUTOMATION_CUSTOM_SCRIPTS: 'false',
    });
    assert.deepEqual(scriptPoolOptionsFromEnv(env), {
      maxThreads: 2,
      defaultMemoryLimitMb: 128,
      graceMs: 500,
      idleTimeoutMs: 60_000,
      patternTimeoutMs: 250,
      customScripts: false,
    });
  });

  it('rejects bad values, naming the variable', () => {
    for (const [name, value] of [
      ['AUTOMATION_EVAL_THREADS', '0'],
      ['AUTOMATION_EVAL_THREADS', 'many'],
      ['AUTOMATION_EVAL_MEMORY_MB', '8'],
      ['AUTOMATION_EVAL_KILL_GRACE', 'soon'],
      ['AUTOMATION_PATTERN_TIMEOUT', 'soon'],
      ['AUTOMATION_CUSTOM_SCRIPTS', 'maybe'],
    ] as const) {
      assert.throws(
        () => scriptPoolOptionsFromEnv(new EnvReader({ [name]: value })),
        (err: unknown) => err instanceof SettingsError && err.variable === name,
      );
    }
  });
});
