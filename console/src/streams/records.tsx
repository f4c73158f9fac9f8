// Records as a table: offset, partition, time, key, headers and a one-line value preview that
// unfolds into the JSON viewer; filters on the key and on the value's text.

import { useState } from 'preact/hooks';
import { Empty } from '../ui/empty.js';
import { TextField } from '../ui/forms.js';
import { JsonView } from '../ui/json-view.js';
import { Table } from '../ui/table.js';
import { When } from '../ui/time.js';
import type { StreamRecord } from './api.js';
import { matchesFilter, newestFirst, valuePreview } from './record-filter.js';

export function RecordTable(props: {
  records: readonly StreamRecord[];
  caption: string;
  /** Order newest first (a tail, live records); otherwise as read (by offset). */
  newest?: boolean;
  /** Names the filter fields apart when two tables share a page. */
  id: string;
}) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  if (props.records.length === 0)
    return (
      <Empty>
        No records here. Produce one with <strong>Produce</strong>, or read from an earlier offset or time.
      </Empty>
    );
  const ordered = props.newest ? newestFirst(props.records) : props.records;
  const shown = ordered.filter((r) => matchesFilter(r, { key, value }));
  return (
    <div class="records-table">
      <div class="form-row" role="search" aria-label={`Filter ${props.caption.toLowerCase()}`}>
        {(
          [
            ['key', 'Filter by key', key, setKey],
            ['value', 'Filter by value text', value, setValue],
          ] as const
        ).map(([what, label, text, set]) => (
          <TextField
            key={what}
            label={label}
            name={`${props.id}-${what}-filter`}
            type="search"
            value={text}
            onValue={set}
          />
        ))}
      </div>
      <p class="muted" role="status">
        {shown.length === ordered.length
          ? `${ordered.length} ${ordered.length === 1 ? 'record' : 'records'}`
          : `${shown.length} of ${ordered.length} records match the filters`}
      </p>
      <Table<StreamRecord>
        caption={props.caption}
        rowKey={(r) => `${r.partition}/${r.offset}`}
        rows={shown}
        pageSize={50}
        empty="No record matches the filters: clear them to see all."
        columns={[
          { key: 'offset', label: 'Offset', numeric: true },
          { key: 'partition', label: 'Partition', numeric: true },
          { key: 'timestamp', label: 'Time', render: (r) => <When at={r.timestamp} /> },
          {
            key: 'key',
            label: 'Key',
            render: (r) => (r.key === null ? <span class="muted">none</span> : <code>{r.key}</code>),
          },
          {
            key: 'headers',
            label: 'Headers',
            render: (r) =>
              (r.headers ?? []).map((h, i) => (
                <div key={i}>
                  <code>{h.key}</code>:{' '}
                  {h.value === null ? <span class="muted">null</span> : <code>{h.value}</code>}
                </div>
              )),
          },
          {
            key: 'value',
            label: 'Value',
            render: (r) => (
              <details class="record-value">
                <summary>
                  <code>{valuePreview(r.value)}</code>
                </summary>
                <JsonView value={r.value} label={`Value of partition ${r.partition} offset ${r.offset}`} />
              </details>
            ),
          },
        ]}
      />
    </div>
  );
}
