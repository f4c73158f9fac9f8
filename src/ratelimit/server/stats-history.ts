// A short ring of per-rule counts for the console's traffic sparklines: every `stepMs` the
// process totals of each rule are read and the increase since the previous read is kept, the
// last `points` of them. A console page that opens then starts with the recent minute of
// traffic instead of an empty line. Each front-end thread keeps its own ring of the one shared
// statistics table (same totals, so the same increases, give or take a step's phase).

export const HISTORY_SERIES = ['total_hits', 'over_limit', 'near_limit'] as const;
export type HistorySeries = (typeof HISTORY_SERIES)[number];
export type RuleTotals = ReadonlyMap<string, Readonly<Record<HistorySeries, number>>>;
export type RuleHistory = Record<HistorySeries, number[]>;

export interface StatsHistoryOptions {
  /** Reads the current per-rule totals. */
  read: () => RuleTotals;
  stepMs?: number;
  points?: number;
}

export class StatsHistory {
  readonly stepMs: number;
  readonly points: number;
  private readonly read: () => RuleTotals;
  private last: RuleTotals | undefined;
  private samples = 0;
  private readonly rings = new Map<string, RuleHistory>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: StatsHistoryOptions) {
    this.read = options.read;
    this.stepMs = options.stepMs ?? 2_000;
    this.points = options.points ?? 30;
  }

  /** Takes the first reading (the baseline) and then one every step; the timer keeps no process alive. */
  start(): this {
    if (this.timer) return this;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.stepMs);
    this.timer.unref();
    return this;
  }

  /** One step: the increase of each rule since the previous reading (0 at the first reading). */
  sample(): void {
    const now = this.read();
    const filled = Math.min(this.samples, this.points);
    for (const [key, totals] of now) {
      let ring = this.rings.get(key);
      if (!ring) {
        // A rule first seen now had no hits in the steps before.
        ring = { total_hits: zeros(filled), over_limit: zeros(filled), near_limit: zeros(filled) };
        this.rings.set(key, ring);
      }
      const previous = this.last?.get(key);
      for (const series of HISTORY_SERIES) {
        const before = previous?.[series] ?? (this.last ? 0 : totals[series]);
        push(ring[series], Math.max(0, totals[series] - before), this.points);
      }
    }
    // A rule that left the table (never, today: the table only grows) keeps a flat line.
    for (const [key, ring] of this.rings)
      if (!now.has(key)) for (const series of HISTORY_SERIES) push(ring[series], 0, this.points);
    this.last = now;
    this.samples++;
  }

  /** The ring of one rule, oldest first; zeros for a rule seen in no reading. */
  of(key: string): RuleHistory {
    const ring = this.rings.get(key);
    const filled = Math.min(this.samples, this.points);
    if (!ring) return { total_hits: zeros(filled), over_limit: zeros(filled), near_limit: zeros(filled) };
    return {
      total_hits: [...ring.total_hits],
      over_limit: [...ring.over_limit],
      near_limit: [...ring.near_limit],
    };
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

const zeros = (n: number): number[] => new Array<number>(n).fill(0);

function push(ring: number[], value: number, max: number): void {
  ring.push(value);
  if (ring.length > max) ring.shift();
}
