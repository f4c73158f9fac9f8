// Points in time as <time> elements: relative text, the full UTC timestamp (milliseconds) on
// hover and in datetime; run events and steps as a clock with milliseconds (time-format.ts).

import { fmtClock, fmtFull, fmtRelative, toDate, type Instant } from './time-format.js';

export { fmtClock, fmtDuration, fmtFull, fmtProtoDuration, fmtRelative } from './time-format.js';

/** A point in time: relative text, full timestamp on hover and for machines. */
export function When({ at }: { at: Instant }) {
  const d = toDate(at);
  if (!d) return <span>{fmtFull(at)}</span>;
  const full = fmtFull(d);
  return (
    <time dateTime={d.toISOString()} title={full}>
      {fmtRelative(d)}
    </time>
  );
}

/** A run's event or step time: clock with milliseconds, full timestamp on hover. */
export function Clock({ at }: { at: Instant }) {
  const d = toDate(at);
  if (!d) return <span>{fmtFull(at)}</span>;
  return (
    <time dateTime={d.toISOString()} title={fmtFull(d)}>
      {fmtClock(d)}
    </time>
  );
}
