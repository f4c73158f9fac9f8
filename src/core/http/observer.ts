// What the HTTP core tells an observer about each request, whichever transport carried it: the
// one feed that request metrics and the access log are built from (src/core/observe). Labels
// are bounded here already: `route` is the matched route's template, never the request path.

export interface RequestRecord {
  readonly method: string;
  /** The matched route's pattern (`/api/v1/runs/:id`), or NO_ROUTE when none matched. */
  readonly route: string;
  /** The status sent; 499 when the client left before an answer. */
  readonly status: number;
  readonly durationSeconds: number;
  /** Body bytes written (0 for HEAD and for an answer never sent). */
  readonly bytes: number;
  readonly requestId: string;
  /** The tenant of the key that authenticated the request, when one did. */
  readonly tenant: string | undefined;
}

export interface RequestObserver {
  /** A request head arrived (before routing). */
  requestStarted(): void;
  /** Called once per started request, when its answer is complete or the client left. */
  requestFinished(record: RequestRecord): void;
  /** A WebSocket was accepted. */
  socketOpened(): void;
  /** An accepted WebSocket closed. */
  socketClosed(): void;
}

/** The route label of a request that matched no route (404, 405, CORS preflight, bad request). */
export const NO_ROUTE = '(none)';

/** Several observers fed as one (metrics and the access log). */
export function combineObservers(observers: readonly RequestObserver[]): RequestObserver | undefined {
  if (observers.length === 0) return undefined;
  if (observers.length === 1) return observers[0];
  return {
    requestStarted: () => observers.forEach((o) => o.requestStarted()),
    requestFinished: (record) => observers.forEach((o) => o.requestFinished(record)),
    socketOpened: () => observers.forEach((o) => o.socketOpened()),
    socketClosed: () => observers.forEach((o) => o.socketClosed()),
  };
}
