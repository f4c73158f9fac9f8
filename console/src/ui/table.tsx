// Tables: a header row with scope, rows as text, an optional row action reachable by keyboard
// (the first cell becomes a button), and paging — on the client (`pageSize`) or driven by the
// caller for server-side paging (`Pager` with a cursor).

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export interface Column<Row> {
  key: string;
  label: string;
  /** Default: the row's field `key` as text. */
  render?: (row: Row) => ComponentChildren;
  /** Right-aligned numbers. */
  numeric?: boolean;
}

export interface TableProps<Row> {
  caption: string;
  columns: Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** Makes the first cell a button that selects the row. */
  onSelect?: (row: Row) => void;
  /** Client-side paging: rows per page. */
  pageSize?: number;
  /** What the empty table says: what to do next (a command, a button to press). */
  empty?: ComponentChildren;
}

export function Table<Row>(props: TableProps<Row>) {
  const [page, setPage] = useState(0);
  const size = props.pageSize ?? 0;
  const pages = size > 0 ? Math.max(1, Math.ceil(props.rows.length / size)) : 1;
  const current = Math.min(page, pages - 1);
  const shown = size > 0 ? props.rows.slice(current * size, current * size + size) : props.rows;
  return (
    <div class="table-wrap">
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c.key} scope="col" class={c.numeric ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length} class="empty">
                {props.empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            shown.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((c, i) => {
                  const content = c.render
                    ? c.render(row)
                    : cellText((row as Record<string, unknown>)[c.key]);
                  return (
                    <td key={c.key} class={c.numeric ? 'num' : undefined}>
                      {i === 0 && props.onSelect ? (
                        <button type="button" class="link" onClick={() => props.onSelect!(row)}>
                          {content}
                        </button>
                      ) : (
                        content
                      )}
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
      </table>
      {size > 0 && pages > 1 ? (
        <Pager
          label={`Page ${current + 1} of ${pages}`}
          onPrevious={current > 0 ? () => setPage(current - 1) : undefined}
          onNext={current < pages - 1 ? () => setPage(current + 1) : undefined}
        />
      ) : null}
    </div>
  );
}

export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '—';
}

export interface PagerProps {
  label: string;
  /** Undefined disables the button. */
  onPrevious?: (() => void) | undefined;
  onNext?: (() => void) | undefined;
}

export function Pager({ label, onPrevious, onNext }: PagerProps) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={!onPrevious} onClick={onPrevious}>
        ← Previous
      </button>
      <span aria-live="polite">{label}</span>
      <button type="button" disabled={!onNext} onClick={onNext}>
        Next →
      </button>
    </nav>
  );
}
