// Environment settings of the evaluator worker pool, read once at start by the automation
// service (a bad value stops the start with a SettingsError naming the variable).
import type { EnvReader } from '../../core/settings/index.js';
import { SCRIPT_LIMITS } from './config-types.js';
import type { ScriptPoolOptions } from './sandbox.js';

export function scriptPoolOptionsFromEnv(env: EnvReader): Required<ScriptPoolOptions> {
  return {
    // Threads per memory limit used by configs; scoring is rare next to the runs it scores.
    maxThreads: env.int('AUTOMATION_EVAL_THREADS', 1, { min: 1, max: 64 }),
    defaultMemoryLimitMb: env.int('AUTOMATION_EVAL_MEMORY_MB', SCRIPT_LIMITS.memoryMb.def, {
      min: SCRIPT_LIMITS.memoryMb.min,
      max: SCRIPT_LIMITS.memoryMb.max,
    }),
    graceMs: env.duration('AUTOMATION_EVAL_KILL_GRACE', 2000),
    idleTimeoutMs: env.duration('AUTOMATION_EVAL_IDLE_TIMEOUT', 30_000),
    // Regex evaluators and validation against schemas with `pattern` (evaluators, run input
    // and output schemas); legitimate patterns finish in microseconds.
    patternTimeoutMs: env.duration('AUTOMATION_PATTERN_TIMEOUT', 1000),
    // On by default so existing configs keep working; docs/security.md says what it exposes.
    customScripts: env.bool('AUTOMATION_CUSTOM_SCRIPTS', true),
  };
}
