// The access log (SLUICE_ACCESS_LOG=true): one line per answered request, from the same request
// observer as the metrics. It names the route template and the request id, never the key, the
// Authorization header, the query string or the ids in the path.

import type { Logger } from '../log.js';
import type { RequestObserver } from '../http/observer.js';

export function accessLogObserver(log: Logger): RequestObserver {
  const access = log.child({ log: 'access' });
  return {
    requestStarted: () => undefined,
    requestFinished: (r) =>
      access.info(
        {
          method: r.method,
          route: r.route,
          status: r.status,
          durationMs: Math.round(r.durationSeconds * 1e6) / 1e3,
          bytes: r.bytes,
          requestId: r.requestId,
          ...(r.tenant !== undefined ? { tenant: r.tenant } : {}),
        },
        'request',
      ),
    socketOpened: () => undefined,
    socketClosed: () => undefined,
  };
}
