// A list of records: offset, partition, time, key, headers and the value pretty-printed.

import { Empty } from '../ui/empty.js';
import { JsonView } from '../ui/json-view.js';
import { When } from '../ui/time.js';
import type { StreamRecord } from './api.js';

export function RecordList({ records, label }: { records: readonly StreamRecord[]; label: string }) {
  if (records.length === 0)
    return (
      <Empty>
        No records here. Produce one with <strong>Produce</strong>, or read from an earlier offset or time.
      </Empty>
    );
  return (
    <ol class="records" aria-label={label}>
      {records.map((r) => (
        <li key={`${r.partition}/${r.offset}`} class="card">
          <dl class="facts">
            <dt>Partition / offset</dt>
            <dd>
              {r.partition} / {r.offset}
            </dd>
            <dt>Time</dt>
            <dd>
              <When at={r.timestamp} />
            </dd>
            <dt>Key</dt>
            <dd>{r.key === null ? <span class="muted">none</span> : <code>{r.key}</code>}</dd>
            {r.headers && r.headers.length > 0 ? (
              <>
                <dt>Headers</dt>
                <dd>
                  {r.headers.map((h, i) => (
                    <div key={i}>
                      <code>{h.key}</code>:{' '}
                      {h.value === null ? <span class="muted">null</span> : <code>{h.value}</code>}
                    </div>
                  ))}
                </dd>
              </>
            ) : null}
          </dl>
          <JsonView value={r.value} label={`value of offset ${r.offset}`} />
        </li>
      ))}
    </ol>
  );
}
