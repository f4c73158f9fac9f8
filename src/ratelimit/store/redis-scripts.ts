// Server-side scripts of the Redis store, defined on every client (ioredis defineCommand: it
// sends EVALSHA, falls back to EVAL the first time on each connection and after a NOSCRIPT).

/**
 * One sliding-window step in one command: add the hits to the current window's key, read the
 * previous window's key. KEYS: current, previous; ARGV: hits, expiry seconds. Replies
 * [current count, previous count]. The expiry is set when the increment created the key (the
 * count equals the hits): it is two windows long and the key is created inside its own window,
 * so it outlives the next window, where it is read as the previous one; renewing it on every
 * hit would cost Redis a command for nothing. Both keys must live in one cluster slot
 * (window-keys.ts gives them a common hash tag in cluster mode).
 */
export const SLIDING_INCREMENT = {
  name: 'sluiceSlidingIncrement',
  numberOfKeys: 2,
  lua: [
    "local current = redis.call('INCRBY', KEYS[1], ARGV[1])",
    "if current == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end",
    "return {current, tonumber(redis.call('GET', KEYS[2]) or '0')}",
  ].join('\n'),
} as const;

/** Anything that can define a script command (a Redis or a Cluster client). */
interface ScriptHost {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
}

export function defineScripts(client: ScriptHost): void {
  client.defineCommand(SLIDING_INCREMENT.name, {
    lua: SLIDING_INCREMENT.lua,
    numberOfKeys: SLIDING_INCREMENT.numberOfKeys,
  });
}
