// The automation section's small building blocks: loading state, error box, JSON viewer, tabs,
// labelled fields, links into the section's hash routes. Every value is rendered as a text node
// (Preact escapes strings; nothing here sets HTML).

import type { ComponentChildren, TargetedKeyboardEvent } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure } from '../api.js';
import { automationUrl } from './urls.js';
import type { AutomationDetail } from './wire.js';
import { JsonView } from '../ui/json-view.js';
import { fmtDuration, fmtFull } from '../ui/time.js';
export { Clock, When } from '../ui/time.js';

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

/** The full timestamp (charts and titles); views show points in time with <When>. */
export const fmtTime = fmtFull;

/** A duration in human units. */
export const fmtMs = fmtDuration;

export function fmtScore(score: number | null | undefined): string {
  return score === null || score === undefined ? '—' : score.toFixed(3).replace(/\.?0+$/, '') || '0';
}

export function Status({ status }: { status: string }) {
  return <span class={`sa-status sa-status-${status.replace(/[^a-z_]/g, '')}`}>{status}</span>;
}

// ---- JSON viewer ----

/** The console's one JSON viewer (ui/json-view.tsx). */
export { JsonView };

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

const names = new Map<string, string>();

/** The automation's display name (name, else slug, else id), loaded once per page load. */
export function useAutomationName(id: string): string {
  const [name, setName] = useState(names.get(id) ?? id);
  useEffect(() => {
    if (names.has(id)) return undefined;
    const controller = new AbortController();
    api<AutomationDetail>(automationUrl(id), { signal: controller.signal }).then(
      (a) => {
        const shown = a.name ?? a.slug ?? a.id;
        names.set(id, shown);
        setName(shown);
      },
      () => undefined, // the id stays the heading; the view shows its own load errors
    );
    return () => controller.abort();
  }, [id]);
  return name;
}

/** A heading naming the view and the automation it is about, with the automation's navigation. */
export function AutomationHeader({ id, title, current }: { id: string; title: string; current: string }) {
  const name = useAutomationName(id);
  return (
    <>
      <h1>
        {title} <span class="sa-of">· {name}</span>
      </h1>
      <AutomationNav id={id} current={current} />
    </>
  );
}

/** "Automation: <name>" above a page about one thing of an automation (an example, an experiment). */
export function AutomationLine({ id }: { id: string }) {
  const name = useAutomationName(id);
  return (
    <p class="sa-muted">
      Automation <a href={href(`/automations/${enc(id)}`)}>{name}</a>
    </p>
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
    ['/review', 'Review queue'],
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
