// The record table's logic without a browser: a short preview of a value, the key and value
// text filters, newest-first order.

/** What the table needs of a record (api.ts's StreamRecord has it; kept apart so this module
 * is tested under Node without the DOM's types). */
export interface TableRecord {
  key: string | null;
  value: unknown;
  partition: number;
  offset: number;
  timestamp: number;
}

const PREVIEW_CHARS = 120;

/** The value as one line of JSON, cut to `max` characters with an ellipsis. */
export function valuePreview(value: unknown, max = PREVIEW_CHARS): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface RecordFilter {
  /** Case-insensitive substring of the key (a record without key never matches a filter). */
  key: string;
  /** Case-insensitive substring of the value's JSON text. */
  value: string;
}

export function matchesFilter(record: TableRecord, filter: RecordFilter): boolean {
  const key = filter.key.trim().toLowerCase();
  const value = filter.value.trim().toLowerCase();
  if (key !== '' && !(record.key ?? '').toLowerCase().includes(key)) return false;
  if (value !== '') {
    const text = typeof record.value === 'string' ? record.value : (JSON.stringify(record.value) ?? '');
    if (!text.toLowerCase().includes(value)) return false;
  }
  return true;
}

/** Newest first: later timestamp, then higher offset, then higher partition. */
export function newestFirst<R extends TableRecord>(records: readonly R[]): R[] {
  return [...records].sort(
    (a, b) => b.timestamp - a.timestamp || b.offset - a.offset || b.partition - a.partition,
  );
}

/** The offset to read from so that `count` records end at the partition's end (the tail). */
export function tailOffset(begin: number, end: number, count: number): number {
  return Math.max(begin, end - count);
}
