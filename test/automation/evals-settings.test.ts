import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EnvReader, loadCoreSettings, SettingsError } from '../../src/core/settings/index.js';
import { loadAutomationSettings } from '../../src/automation/settings.js';

// The evaluator pool's and the quality routes' settings are part of AutomationSettings.
const load = (vars: Record<string, string>) => {
  const env = new EnvReader(vars);
  return loadAutomationSettings(env, loadCoreSettings(env));
};
const scriptPoolOptionsFromEnv = (env: Record<string, string>) => load(env).evalPool;

describe('automation settings: evaluator pool and experiments', () => {
  it('has defaults', () => {
    assert.deepEqual(scriptPoolOptionsFromEnv({}), {
      maxThreads: 1,
      defaultMemoryLimitMb: 64,
      graceMs: 2000,
      idleTimeoutMs: 30_000,
      patternTimeoutMs: 1000,
      customScripts: true,
    });
  });

  it('reads every setting', () => {
    const env = {
      AUTOMATION_EVAL_THREADS: '2',
      AUTOMATION_EVAL_MEMORY_MB: '128',
      AUTOMATION_EVAL_KILL_GRACE: '500ms',
      AUTOMATION_EVAL_IDLE_TIMEOUT: '1m',
      AUTOMATION_PATTERN_TIMEOUT: '250ms',
      AUTOMATION_CUSTOM_SCRIPTS: 'false',
    };
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
      ['AUTOMATION_EXPERIMENT_CONCURRENCY', '0'],
    ] as const) {
      assert.throws(
        () => scriptPoolOptionsFromEnv({ [name]: value }),
        (err: unknown) => err instanceof SettingsError && err.variable === name,
      );
    }
  });

  it('reads the experiment concurrency', () => {
    assert.equal(load({}).experimentConcurrency, 8);
    assert.equal(load({ AUTOMATION_EXPERIMENT_CONCURRENCY: '3' }).experimentConcurrency, 3);
  });
});
