// The automation section's small building blocks: loading state, error box, JSON viewer, tabs,
// labelled fields, links into the section's hash routes. Every value is rendered as a text node
// (Preact escapes strings; nothing here sets HTML).

import type { ComponentChildren, TargetedKeyboardEvent } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api.js';

// ---- links ----

/** `#/automation<path>?<query>`; query values that are empty are left out. */
export function href(path: string, query?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const qs = q.toString();
  return `#/automation${path}${qs ? `?${qs}` : ''}`;
}

export function navigate(path: string, query?: Record<string, string | undefined>): void {
  location.hash = href(path, query).slice(1);
}

export const enc = encodeURIComponent;

/** A relative file path as URL segments, each encoded (slashes stay separators). */
export function encPath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

// ---- loading ----

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  setData: (data: T) => void;
}

/** Runs `load` when `deps` change (aborting the previous call) and on reload(). */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, setData };
}

/** Calls `fn` every `ms` while `active`, never two at once. */
export function usePoll(fn: () => Promise<unknown> | void, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        await saved.current();
      } catch {
        // the view shows its own error state; polling goes on
      }
      if (!stopped) timer = setTimeout(() => void tick(), ms);
    };
    timer = setTimeout(() => void tick(), ms);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [active, ms]);
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 0) return error.message;
    return `${error.message} (${error.status} ${error.code})`;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export function Failure({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  const issues = error instanceof ApiFailure ? error.issues : [];
  return (
    <div class="sa-error" role="alert">
      <strong>{title ?? 'Something went wrong'}: </strong>
      {issues.length > 1 ? (
        <ul>
          {issues.map((i, n) => (
            <li key={n}>
              {i.field && i.field !== '<root>' ? <code>{i.field}</code> : null} {i.message}
            </li>
          ))}
        </ul>
      ) : (
        <span>{messageOf(error)}</span>
      )}
    </div>
  );
}

export function Loading({ what }: { what?: string }) {
  return (
    <p class="sa-muted" role="status">
      Loading{what ? ` ${what}` : ''}…
    </p>
  );
}

/** The usual three states of a loaded view. */
export function Show<T>({
  loaded,
  what,
  children,
}: {
  loaded: Loaded<T>;
  what?: string;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.error !== undefined)
    return <Failure error={loaded.error} title={`Could not load ${what ?? 'this'}`} />;
  if (loaded.data === undefined) return <Loading {...(what ? { what } : {})} />;
  return <>{children(loaded.data)}</>;
}

// ---- values ----

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function fmtScore(score: number | null | undefined): string {
  return score === null || score === undefined ? '—' : score.toFixed(3).replace(/\.?0+$/, '') || '0';
}

export function Status({ status }: { status: string }) {
  return <span class={`sa-status sa-status-${status.replace(/[^a-z_]/g, '')}`}>{status}</span>;
}

// ---- JSON viewer ----

const OPEN_DEPTH = 2;

/** A collapsible tree of a JSON value; containers below the second level start closed. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <div class="sa-json" aria-label={label}>
      <JsonNode value={value} depth={0} />
    </div>
  );
}

function JsonNode({ value, depth, name }: { value: unknown; depth: number; name?: string }) {
  const key = name !== undefined ? <span class="sa-json-key">{name}: </span> : null;
  if (value === null || typeof value !== 'object') {
    const cls = value === null ? 'null' : typeof value;
    return (
      <div class="sa-json-leaf">
        {key}
        <span class={`sa-json-${cls}`}>{value === undefined ? 'undefined' : JSON.stringify(value)}</span>
      </div>
    );
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0)
    return (
      <div class="sa-json-leaf">
        {key}
        {open}
        {close}
      </div>
    );
  return (
    <details class="sa-json-node" open={depth < OPEN_DEPTH}>
      <summary>
        {key}
        {open}
        <span class="sa-muted">
          {' '}
          {entries.length} {Array.isArray(value) ? 'items' : 'fields'}
        </span>
      </summary>
      <div class="sa-json-children">
        {entries.map(([k, v]) => (
          <JsonNode key={k} name={k} value={v} depth={depth + 1} />
        ))}
      </div>
      <div>{close}</div>
    </details>
  );
}

// ---- layout ----

export function Field({
  label,
  children,
  hint,
}: {
  label: string;
  children: ComponentChildren;
  hint?: string;
}) {
  return (
    <label class="sa-field">
      <span class="sa-field-label">{label}</span>
      {children}
      {hint ? <span class="sa-muted sa-field-hint">{hint}</span> : null}
    </label>
  );
}

export interface TabSpec {
  id: string;
  label: string;
}

/** A tab list: arrow keys, Home and End move between tabs (WAI-ARIA tabs pattern). */
export function Tabs({
  tabs,
  current,
  onSelect,
  label,
}: {
  tabs: TabSpec[];
  current: string;
  onSelect: (id: string) => void;
  label: string;
}) {
  const onKey = (e: TargetedKeyboardEvent<HTMLDivElement>) => {
    const i = tabs.findIndex((t) => t.id === current);
    let next = -1;
    if (e.key === 'ArrowRight') next = (i + 1) % tabs.length;
    else if (e.key === 'ArrowLeft') next = (i - 1 + tabs.length) % tabs.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = tabs.length - 1;
    if (next < 0) return;
    e.preventDefault();
    const tab = tabs[next]!;
    onSelect(tab.id);
    const el = e.currentTarget.querySelector<HTMLElement>(`[data-tab="${tab.id}"]`);
    el?.focus();
  };
  return (
    <div class="sa-tabs" role="tablist" aria-label={label} onKeyDown={onKey}>
      {tabs.map((t) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          data-tab={t.id}
          aria-selected={t.id === current}
          aria-controls={`panel-${t.id}`}
          tabIndex={t.id === current ? 0 : -1}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <section class="sa-panel" role="tabpanel" id={`panel-${id}`} aria-labelledby={`tab-${id}`}>
      {children}
    </section>
  );
}

/** The automation's own sub-navigation (runs, dataset, evaluators, experiments, health). */
export function AutomationNav({ id, current }: { id: string; current: string }) {
  const items: [string, string][] = [
    ['', 'Overview'],
    ['/runs', 'Runs'],
    ['/dataset', 'Dataset'],
    ['/evaluators', 'Evaluators'],
    ['/experiments', 'Experiments'],
    ['/health', 'Review health'],
  ];
  return (
    <nav class="sa-subnav" aria-label="Automation">
      {items.map(([suffix, label]) =>
        suffix === '/runs' ? (
          <a key={label} href={href('/runs', { source: id })}>
            {label}
          </a>
        ) : (
          <a
            key={label}
            href={href(`/automations/${enc(id)}${suffix}`)}
            aria-current={current === suffix ? 'page' : undefined}
          >
            {label}
          </a>
        ),
      )}
    </nav>
  );
}

/** Runs an async action, keeping its busy state and failure for the view. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (fn: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

/** A table's column headers. */
export function TableHead({ cols }: { cols: ComponentChildren[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c, i) => (
          <th scope="col" key={i}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Previous/next links of an offset-paged list (automations, examples): `offset` in the hash. */
export function OffsetPager({
  path,
  query,
  offset,
  size,
  total,
  label,
}: {
  path: string;
  query?: Record<string, string>;
  offset: number;
  size: number;
  total: number;
  label: string;
}) {
  const first = offset === 0;
  const last = offset + size >= total;
  return (
    <nav class="sa-row" aria-label={label}>
      <a
        href={href(path, { ...query, offset: String(Math.max(0, offset - size)) })}
        aria-disabled={first}
        class={first ? 'sa-disabled' : ''}
      >
        Previous
      </a>
      <span class="sa-muted">
        {total === 0 ? 0 : offset + 1}–{Math.min(offset + size, total)} of {total}
      </span>
      <a
        href={href(path, { ...query, offset: String(offset + size) })}
        aria-disabled={last}
        class={last ? 'sa-disabled' : ''}
      >
        Next
      </a>
    </nav>
  );
}
