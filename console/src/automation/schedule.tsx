// The automation's schedule (its `triggers.cron`), read from the Sluice extension
// GET /api/v1/schedules (docs/automation.md, "Triggers"): the expression, its time zone and
// overlap rule, the next tick times, and what the scheduler did so far.

import { api } from '../api.js';
import { Empty } from '../ui/empty.js';
import { apiUrl } from './urls.js';
import { enc, href, Show, useLoad, When } from './ui.js';

/** One schedule as GET /schedules lists it (the fields this view shows). */
interface ScheduleView {
  automationId: string;
  schedule: string;
  timezone: string;
  overlap: 'skip' | 'allow';
  version: string;
  nextFireTimes: string[];
  lastFireAt: string | null;
  lastRunId: string | null;
  fired: number;
  skipped: number;
  missed: number;
  lastSkipReason: string | null;
}

const NEXT = 5;

export function AutomationSchedule({ id }: { id: string }) {
  const schedules = useLoad(
    (signal) => api<{ data: ScheduleView[] }>(apiUrl(`/schedules?next=${NEXT}`), { signal }),
    [id],
  );
  return (
    <section aria-labelledby="schedule">
      <h2 id="schedule">Schedule</h2>
      <Show loaded={schedules} what="the schedule">
        {(list) => {
          const s = list.data.find((row) => row.automationId === id);
          if (!s) {
            return (
              <Empty>
                No schedule. Add <code>triggers.cron</code> to the manifest (e.g.{' '}
                <code>{'"cron": {"schedule": "0 6 * * *", "timezone": "Europe/Paris"}'}</code>), tag a release
                and sync it; the schedule then shows here with its next times.
              </Empty>
            );
          }
          return (
            <>
              <dl class="sa-facts">
                <dt>Expression</dt>
                <dd>
                  <code>{s.schedule}</code> ({s.timezone})
                </dd>
                <dt>Overlap</dt>
                <dd>{s.overlap === 'skip' ? 'skip a tick while the previous run is running' : 'allow'}</dd>
                <dt>From release</dt>
                <dd>{s.version}</dd>
                <dt>Fired / skipped / missed</dt>
                <dd>
                  {s.fired} / {s.skipped} / {s.missed}
                  {s.lastSkipReason ? ` (last skip: ${s.lastSkipReason})` : ''}
                </dd>
                <dt>Last tick</dt>
                <dd>
                  {s.lastFireAt ? <When at={s.lastFireAt} /> : 'never'}
                  {s.lastRunId ? (
                    <>
                      {' '}
                      <a href={href(`/runs/${enc(s.lastRunId)}`)}>its run</a>
                    </>
                  ) : null}
                </dd>
              </dl>
              <h3 id="next-ticks">Next ticks</h3>
              <ol aria-labelledby="next-ticks">
                {s.nextFireTimes.map((t) => (
                  <li key={t}>
                    <When at={t} />
                  </li>
                ))}
              </ol>
            </>
          );
        }}
      </Show>
    </section>
  );
}
