// Waiting on state instead of on the clock. CI runs on a loaded 2-core machine, so a test
// never assumes that something is done (or still not done) after a given time; it polls the
// state it needs. The deadline only turns a hang into a failure with a message: it is long on
// purpose and is never what makes a test pass.

/** How long a wait may take before it counts as a hang. */
export const HANG_MS = 60_000;

/**
 * Calls `probe` until it returns a value other than undefined/false and resolves with that
 * value; throws naming `what` once `timeoutMs` has passed without it.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? HANG_MS);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
  }
}

/** Rejects with `what` if `promise` has not settled within `timeoutMs` (a hang guard only). */
export async function withinHang<T>(what: string, promise: Promise<T>, timeoutMs = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
