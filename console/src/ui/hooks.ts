// Data hooks the views share: load once (with reload), and poll while the view is shown. A poll
// never overlaps itself (the next call starts after the previous one settled) and stops when the
// view goes away, so a slow or down service is not hammered.

import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Calls `load` when `deps` change and every `intervalMs` (when given) while mounted. */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  intervalMs?: number,
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const run = async () => {
      setLoading(true);
      try {
        const value = await loadRef.current(controller.signal);
        if (stopped) return;
        setData(value);
        setError(undefined);
      } catch (err) {
        if (stopped || (err as Error).name === 'AbortError') return;
        setError(err);
      }
      setLoading(false);
      if (intervalMs !== undefined && !stopped) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      stopped = true;
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [...deps, tick, intervalMs]);
  return { data, error, loading, reload: () => setTick((t) => t + 1) };
}

export interface Action<T> {
  busy: boolean;
  /** The latest run's failure (cleared when another run starts). */
  failure: unknown;
  /** The latest run's result (cleared when another run starts). */
  result: T | undefined;
  run: (work: () => Promise<T>) => Promise<void>;
}

/**
 * A form's submit: busy while it runs, then its result or its failure, never both. A new run
 * clears the previous one's result and failure at once, so nothing computed for earlier input
 * is shown (or confirmed) beside the new input; when runs overlap, only the latest one's outcome
 * is kept.
 */
export function useAction<T>(): Action<T> {
  const [state, setState] = useState<{ busy: boolean; failure: unknown; result: T | undefined }>({
    busy: false,
    failure: undefined,
    result: undefined,
  });
  const latest = useRef(0);
  const run = async (work: () => Promise<T>) => {
    const mine = ++latest.current;
    setState({ busy: true, failure: undefined, result: undefined });
    try {
      const result = await work();
      if (mine === latest.current) setState({ busy: false, failure: undefined, result });
    } catch (failure) {
      if (mine === latest.current) setState({ busy: false, failure, result: undefined });
    }
  };
  return { ...state, run };
}
