// Window keys shared by the network stores, so Redis and the object cache agree with the
// upstream service byte for byte in fixed mode:
//   key = CACHE_KEY_PREFIX + domain + "_" + Σ(key_value_) + decimal(window start in Unix seconds)
// (the engine builds everything up to the window start). Sliding mode appends `_s<window
// seconds>` to that key — without it a minute limit's previous window and an hour limit's
// current window of one descriptor would share a key — increments the current window's key,
// only reads the previous window's key, and counts current + previous × (the part of the
// previous window still inside the sliding interval). Where both keys must share a Redis
// Cluster slot (one script touches both), `hashTag` wraps the common part in `{…}`: the slot
// is then computed from the text up to the first `}` after the leading `{`, which both keys share.

import type { WindowAlgorithm } from '../settings/index.js';

export interface WindowPlan {
  /** Key of the window that holds `now`. */
  current: string;
  /** Key of the window before it (sliding mode only). */
  previous: string | undefined;
  startMs: number;
  lengthMs: number;
}

export function planWindow(
  key: string,
  divider: number,
  nowMs: number,
  algorithm: WindowAlgorithm,
  hashTag = false,
): WindowPlan {
  const nowS = Math.floor(nowMs / 1000);
  const start = nowS - (nowS % divider);
  if (algorithm === 'sliding') {
    const suffix = `_s${divider}`;
    if (hashTag) key = '{' + key + '}';
    return {
      current: key + start + suffix,
      previous: key + (start - divider) + suffix,
      startMs: start * 1000,
      lengthMs: divider * 1000,
    };
  }
  return {
    current: key + start,
    previous: undefined,
    startMs: start * 1000,
    lengthMs: divider * 1000,
  };
}

export function slidingCount(current: number, previous: number, plan: WindowPlan, nowMs: number): number {
  if (previous <= 0) return current;
  const elapsed = Math.min(Math.max(nowMs - plan.startMs, 0), plan.lengthMs);
  return current + Math.floor((previous * (plan.lengthMs - elapsed)) / plan.lengthMs);
}

/**
 * Until when a key counted `current` (+ `previous` when sliding) stays over `limit`: the end of
 * the window when the current window alone is over; otherwise the moment the previous window's
 * weight has shrunk enough for one more hit to fit.
 */
export function overLimitUntil(current: number, previous: number, limit: number, plan: WindowPlan): number {
  const end = plan.startMs + plan.lengthMs;
  if (current > limit || previous <= 0) return end;
  const fraction = 1 - (limit - current + 1) / previous;
  if (fraction <= 0) return plan.startMs;
  return Math.min(end, plan.startMs + Math.floor(fraction * plan.lengthMs));
}

/** Expiry in seconds: the window (two windows when sliding, so the previous one can be read) plus jitter. */
export function expirySeconds(
  divider: number,
  algorithm: WindowAlgorithm,
  jitterMax: number,
  random: () => number,
): number {
  const base = algorithm === 'sliding' ? 2 * divider : divider;
  return jitterMax > 0 ? base + Math.floor(random() * jitterMax) : base;
}
