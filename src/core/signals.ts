// A stop signal that arrives before the supervisor handles signals itself. The entry scripts
// (bin/sluice.js, scripts/start.js) start a server only after building and importing the code,
// which takes a while; meanwhile scripts/early-stop.js remembers SIGTERM/SIGINT under a global
// key instead of letting the signal kill the process, and the supervisor takes the remembered
// signal over here and stops at once.

const KEY = Symbol.for('sluice.earlyStop');

interface EarlyStop {
  signal: NodeJS.Signals | undefined;
  listener: (signal: NodeJS.Signals) => void;
}

/** Stops remembering; returns the signal that came meanwhile, if any. */
export function takeEarlyStop(): NodeJS.Signals | undefined {
  const global = globalThis as { [KEY]?: EarlyStop };
  const state = global[KEY];
  if (!state) return undefined;
  delete global[KEY];
  process.off('SIGTERM', state.listener);
  process.off('SIGINT', state.listener);
  return state.signal;
}
