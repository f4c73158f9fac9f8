// Every call to a Sluice API from the console goes through here: the key from the tab's
// session storage as a bearer token (never in a URL), JSON in and out, and errors turned into
// ApiFailure with the server's code and message so views can show them as text.

const KEY_ITEM = 'sluice.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

/** One entry of the automation API's error envelope (`{issues: [{field, message, code, severity}]}`). */
export interface ApiIssue {
  field: string;
  message: string;
  code: string;
  severity: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Every issue of an error envelope that lists them (empty otherwise). */
    readonly issues: ApiIssue[] = [],
  ) {
    super(message);
  }
}

export interface ApiOptions {
  method?: string;
  /** Sent as JSON unless it is already a body the browser can send (FormData, Blob, string). */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Calls `path` (absolute, e.g. `/api/v1/runs`) on the origin that served the console. */
export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const response = await request(path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Same as `api`, for answers that are not JSON (downloads, NDJSON streams). */
export async function request(path: string, options: ApiOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const key = storedKey();
  if (key) headers.authorization = `Bearer ${key}`;
  let body: BodyInit | null = null;
  if (options.body instanceof FormData || options.body instanceof Blob || typeof options.body === 'string') {
    body = options.body;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body,
      signal: options.signal ?? null,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure(0, 'unreachable', 'The service did not answer; it may be down.');
  }
  if (!response.ok) throw await failureOf(response);
  return response;
}

async function failureOf(response: Response): Promise<ApiFailure> {
  let code = `http_${response.status}`;
  let message = response.statusText || `HTTP ${response.status}`;
  let issues: ApiIssue[] = [];
  try {
    const body = (await response.json()) as Record<string, unknown>;
    // The automation API answers {issues: [...], requestId}: the issues carry the code and text.
    if (Array.isArray(body.issues)) {
      const text = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
      issues = (body.issues as Record<string, unknown>[]).map((i) => ({
        field: text(i.field, ''),
        message: text(i.message, ''),
        code: text(i.code, ''),
        severity: text(i.severity, 'error'),
      }));
      const first = issues[0];
      if (first) {
        code = first.code || code;
        message = issues
          .map((i) => (i.field && i.field !== '<root>' ? `${i.field}: ${i.message}` : i.message))
          .join('; ');
      }
    }
    const error = (body.error ?? body) as Record<string, unknown>;
    if (typeof error.code === 'string' || typeof error.code === 'number') code = String(error.code);
    else if (typeof body.error_code === 'number') code = String(body.error_code);
    if (typeof error.message === 'string') message = error.message;
    else if (typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiFailure(response.status, code, message, issues);
}
