// A JSON viewer: objects and arrays fold with <details> (keyboard and screen-reader friendly
// without script), scalars are coloured by type. Every value is rendered as text. Long arrays and
// objects show their first entries and say how many more there are, so a huge document does not
// freeze the page.

const MAX_ENTRIES = 200;

export interface JsonViewProps {
  value: unknown;
  /** Levels open at first (default 2). */
  open?: number;
  label?: string;
}

export function JsonView({ value, open = 2, label }: JsonViewProps) {
  return (
    <div class="json-view" aria-label={label ?? 'JSON value'} role="group">
      <Node value={value} depth={0} open={open} name={undefined} />
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span class="j-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <span class="j-str">{JSON.stringify(value)}</span>;
    case 'number':
    case 'bigint':
      return <span class="j-num">{String(value)}</span>;
    case 'boolean':
      return <span class="j-bool">{String(value)}</span>;
    case 'undefined':
      return <span class="j-null">undefined</span>;
    default:
      return <span>{typeof value}</span>;
  }
}

function Node({
  value,
  depth,
  open,
  name,
}: {
  value: unknown;
  depth: number;
  open: number;
  name: string | undefined;
}) {
  const key = name === undefined ? null : <span class="j-key">{name}: </span>;
  if (value === null || typeof value !== 'object')
    return (
      <div class="j-line">
        {key}
        <Scalar value={value} />
      </div>
    );
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray
    ? (value as unknown[]).slice(0, MAX_ENTRIES).map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>).slice(0, MAX_ENTRIES);
  const total = isArray ? (value as unknown[]).length : Object.keys(value).length;
  const summary = isArray ? `[${total}]` : `{${total}}`;
  if (total === 0)
    return (
      <div class="j-line">
        {key}
        <span class="j-punct">{isArray ? '[]' : '{}'}</span>
      </div>
    );
  return (
    <details class="j-node" open={depth < open}>
      <summary>
        {key}
        <span class="j-punct">{summary}</span>
      </summary>
      <div class="j-children">
        {entries.map(([k, v]) => (
          <Node key={k} value={v} depth={depth + 1} open={open} name={k} />
        ))}
        {total > MAX_ENTRIES ? <div class="j-more">… {total - MAX_ENTRIES} more</div> : null}
      </div>
    </details>
  );
}

/** Pretty-printed JSON as text when the string is JSON, the string itself otherwise. */
export function prettyText(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
