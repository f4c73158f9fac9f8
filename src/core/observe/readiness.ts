// Readiness: whether a service's backends answer now. Each service registers its checks (a
// database ping, a connection's state, "the registry is loaded"); /readyz runs them all at once,
// each bounded by a time-out so a slow backend answers "not ready" instead of holding the probe,
// and keeps the result for a moment so a burst of probes costs one round of checks. Once the
// service begins to drain, it is not ready whatever the checks say.

/** Resolves when ready; throws (or rejects) with the reason when not. */
export type ReadinessCheck = () => void | Promise<void>;

export interface CheckResult {
  readonly ready: boolean;
  /** Why not, when not ready. */
  readonly reason?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly draining: boolean;
  readonly checks: Readonly<Record<string, CheckResult>>;
}

export interface ReadinessOptions {
  /** The longest one check may take before it counts as not ready (default 1 s). */
  timeoutMs?: number;
  /** How long a result is reused (default 250 ms). */
  cacheMs?: number;
}

export class ReadinessRegistry {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private isDraining = false;
  private last: { at: number; checks: Record<string, CheckResult> } | undefined;
  private running: Promise<Record<string, CheckResult>> | undefined;

  constructor(options: ReadinessOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1_000;
    this.cacheMs = options.cacheMs ?? 250;
  }

  register(name: string, check: ReadinessCheck): void {
    if (this.checks.has(name)) throw new Error(`readiness check ${name} is registered already`);
    this.checks.set(name, check);
    this.last = undefined;
  }

  /** From now on the service is not ready (its shutdown began). */
  beginDrain(): void {
    this.isDraining = true;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  async evaluate(): Promise<ReadinessReport> {
    const checks = await this.results();
    const ready = !this.isDraining && Object.values(checks).every((c) => c.ready);
    return { ready, draining: this.isDraining, checks };
  }

  private results(): Promise<Record<string, CheckResult>> {
    if (this.last && performance.now() - this.last.at < this.cacheMs)
      return Promise.resolve(this.last.checks);
    // Probes that arrive while a round runs share it.
    this.running ??= this.runAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runAll(): Promise<Record<string, CheckResult>> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => [name, await this.runOne(check)] as const),
    );
    const checks = Object.fromEntries(entries);
    this.last = { at: performance.now(), checks };
    return checks;
  }

  private runOne(check: ReadinessCheck): Promise<CheckResult> {
    return new Promise<CheckResult>((resolve) => {
      const timer = setTimeout(
        () => resolve({ ready: false, reason: `no answer within ${this.timeoutMs} ms` }),
        this.timeoutMs,
      );
      const settle = (result: CheckResult) => {
        clearTimeout(timer);
        resolve(result);
      };
      try {
        Promise.resolve(check()).then(
          () => settle({ ready: true }),
          (error: unknown) => settle({ ready: false, reason: reasonOf(error) }),
        );
      } catch (error) {
        settle({ ready: false, reason: reasonOf(error) });
      }
    });
  }
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 300 ? message.slice(0, 300) + '…' : message;
}

/** A check that throws `reason` unless `ok()` holds (for state kept by a connection or a loader). */
export function stateCheck(ok: () => boolean, reason: string): ReadinessCheck {
  return () => {
    if (!ok()) throw new Error(reason);
  };
}
