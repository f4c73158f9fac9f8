// The request body and headers an HTTP load sends, resolved once for every client.

import type { HttpLoad } from '../types.js';

export interface ResolvedHttpLoad {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Statuses that count as success; undefined = any 2xx. */
  okStatus: number[] | undefined;
}

/** True when `status` counts as a successful answer for this load. */
export function isOk(load: ResolvedHttpLoad, status: number): boolean {
  return load.okStatus ? load.okStatus.includes(status) : status >= 200 && status < 300;
}

export function resolveHttpLoad(load: HttpLoad): ResolvedHttpLoad {
  const headers: Record<string, string> = { ...load.headers };
  let body: string | undefined;
  if (load.body !== undefined) {
    body = typeof load.body === 'string' ? load.body : JSON.stringify(load.body);
    const hasType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
    if (!hasType) headers['content-type'] = typeof load.body === 'string' ? 'text/plain' : 'application/json';
  }
  return { method: load.method, path: load.path, headers, body, okStatus: load.okStatus };
}
