// The request metrics of one service's HTTP port, fed by the HTTP core's request observer on
// both transports. Labels are bounded: the method (the usual verbs, anything else as OTHER),
// the route template (never the path), the status class.

import type { RequestObserver, RequestRecord } from '../http/observer.js';
import type { MetricsRegistry } from './metrics.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function statusClass(status: number): string {
  if (status < 200) return '1xx';
  if (status < 300) return '2xx';
  if (status < 400) return '3xx';
  if (status < 500) return '4xx';
  return '5xx';
}

export function httpMetricsObserver(metrics: MetricsRegistry, service: string): RequestObserver {
  const labels = ['service', 'method', 'route', 'status_class'];
  const requests = metrics.counter('sluice_http_requests_total', 'HTTP requests answered', labels);
  const duration = metrics.histogram(
    'sluice_http_request_duration_seconds',
    'Time from the request head to the end of the answer',
    labels,
  );
  const inflight = metrics.gauge('sluice_http_requests_in_flight', 'HTTP requests being answered', [
    'service',
  ]);
  const sockets = metrics.gauge('sluice_http_websockets_open', 'Open WebSocket connections', ['service']);
  const own = { service };
  inflight.set(own, 0);
  sockets.set(own, 0);
  return {
    requestStarted: () => inflight.inc(own),
    requestFinished: (record: RequestRecord) => {
      inflight.dec(own);
      const l = {
        service,
        method: METHODS.has(record.method) ? record.method : 'OTHER',
        route: record.route,
        status_class: statusClass(record.status),
      };
      requests.inc(l);
      duration.observe(l, record.durationSeconds);
    },
    socketOpened: () => sockets.inc(own),
    socketClosed: () => sockets.dec(own),
  };
}
