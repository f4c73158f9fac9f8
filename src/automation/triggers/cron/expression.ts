// The cron library's adapter (croner, https://github.com/hexagon/croner): the one module that
// imports it. A schedule is a 5-field expression (minute precision) or a 6-field one with
// seconds first, in an IANA time zone (UTC when none is named). Daylight-saving behaviour is
// croner's, as its README documents ("DST handling", the Vixie cron rules): a fixed-time
// schedule such as `30 2 * * *` runs once when 02:30 occurs twice and at the first valid time
// after a spring-forward gap; an interval schedule (`*/15 * * * *`) skips times in a gap and
// runs on both occurrences of a repeated time.

import { Cron } from 'croner';

export class CronExpression {
  private constructor(
    private readonly cron: Cron,
    readonly schedule: string,
    readonly timezone: string,
  ) {}

  /** The expression, or the reason it is not one (as a message for the manifest's issue). */
  static parse(schedule: string, timezone: string | null): CronExpression | string {
    const fields = schedule.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6)
      return `must have 5 fields (minute hour day month weekday) or 6 with seconds first, not ${fields}`;
    const zone = timezone ?? 'UTC';
    if (!validZone(zone))
      return `unknown time zone ${JSON.stringify(zone)} (an IANA name such as Europe/Paris)`;
    try {
      // paused, no function: croner only computes times; this service fires them (scheduler.ts).
      const cron = new Cron(schedule.trim(), { timezone: zone, paused: true, mode: '5-or-6-parts' });
      if (cron.nextRun(new Date(0)) === null) return 'never fires';
      return new CronExpression(cron, schedule.trim(), zone);
    } catch (err) {
      return (err as Error).message.replace(/^CronPattern: /, '');
    }
  }

  /** The first tick strictly after `after` (epoch ms), or null when there is none. */
  next(after: number): number | null {
    return this.cron.nextRun(new Date(after))?.getTime() ?? null;
  }

  /** Up to `n` ticks strictly after `after`, in order. */
  nextTicks(n: number, after: number): number[] {
    return this.cron.nextRuns(n, new Date(after)).map((d) => d.getTime());
  }

  /** Up to `n` ticks at or before `at`, latest first. */
  latest(n: number, at: number): number[] {
    // croner counts a tick earlier in the reference's second as "previous": ask from the next
    // second and keep what is not after `at`.
    return this.cron
      .previousRuns(n + 1, new Date(at + 1000))
      .map((d) => d.getTime())
      .filter((t) => t <= at)
      .slice(0, n);
  }
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
