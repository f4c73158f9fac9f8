// Used by the entry scripts before they build and import the server: a SIGTERM/SIGINT that comes
// meanwhile is remembered instead of killing the process, and the supervisor takes it over
// (src/core/signals.ts reads the same global key) and stops at once with status 0. A second
// signal before then exits with status 1, as the supervisor's second signal does.

const KEY = Symbol.for('sluice.earlyStop');

/** The commands that run servers (the others keep Node's default signal handling). */
const SERVING = new Set(['serve', 'ratelimit', 'streams', 'automation']);

export function rememberEarlyStop(command) {
  if (!SERVING.has(command) || globalThis[KEY]) return;
  const state = {
    signal: undefined,
    listener: (signal) => {
      if (state.signal) process.exit(1);
      state.signal = signal;
    },
  };
  globalThis[KEY] = state;
  process.on('SIGTERM', state.listener);
  process.on('SIGINT', state.listener);
}
