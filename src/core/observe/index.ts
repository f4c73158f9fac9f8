// Operating a service: its readiness checks, its metrics, the request observer the HTTP core
// feeds (metrics and the access log), and the probe routes every service mounts on its own HTTP
// port: GET /livez, GET /readyz, GET /metrics (docs/operations.md). A service makes one
// ServiceOperations at start, registers its checks and metrics on it, mounts its routes, passes
// its observer to startHttpServer, and calls beginShutdown when its shutdown begins.

import type { Router } from '../http/index.js';
import { combineObservers, type RequestObserver } from '../http/observer.js';
import type { Logger } from '../log.js';
import type { ObserveSettings } from '../settings/index.js';
import { accessLogObserver } from './access-log.js';
import { httpMetricsObserver } from './http-metrics.js';
import { MetricsRegistry } from './metrics.js';
import { ReadinessRegistry } from './readiness.js';

export { MetricsRegistry, LATENCY_BUCKETS, RUN_BUCKETS } from './metrics.js';
export type { CounterMetric, GaugeMetric, HistogramMetric, Labels } from './metrics.js';
export { ReadinessRegistry, stateCheck, type ReadinessCheck, type ReadinessReport } from './readiness.js';
export { boundedLabel } from './bounded-label.js';

export interface OperationsOptions {
  service: string;
  settings: ObserveSettings;
  log: Logger;
  /** This front-end thread, and how many threads run this service in the process. */
  thread: { index: number; serviceThreads: number };
}

export class ServiceOperations {
  readonly readiness = new ReadinessRegistry();
  readonly metrics: MetricsRegistry;
  /** What to pass to startHttpServer's `observer` (undefined: nothing to observe). */
  readonly observer: RequestObserver | undefined;
  private readonly started = Date.now();

  constructor(private readonly options: OperationsOptions) {
    const { service, settings, thread } = options;
    this.metrics = new MetricsRegistry({
      service,
      threads: thread.serviceThreads,
      defaultMetrics: settings.metrics && thread.index === 0,
    });
    const observers: RequestObserver[] = [];
    if (settings.metrics) observers.push(httpMetricsObserver(this.metrics, service));
    if (settings.accessLog) observers.push(accessLogObserver(options.log));
    this.observer = combineObservers(observers);
  }

  /** GET /livez, GET /readyz and (unless SLUICE_METRICS=false) GET /metrics. */
  mount(router: Router): void {
    const { service, settings } = this.options;
    router.get(
      '/livez',
      (_req, res) => {
        res.header('cache-control', 'no-store').json({
          status: 'live',
          service,
          uptime_seconds: Math.round((Date.now() - this.started) / 1000),
        });
      },
      { scope: false },
    );
    router.get(
      '/readyz',
      async (_req, res) => {
        const report = await this.readiness.evaluate();
        const status = report.ready ? 'ready' : report.draining ? 'draining' : 'not_ready';
        res.header('cache-control', 'no-store').json(
          {
            status,
            service,
            checks: report.checks,
            ...(report.ready
              ? {}
              : {
                  not_ready: [
                    ...(report.draining ? ['draining'] : []),
                    ...Object.entries(report.checks)
                      .filter(([, c]) => !c.ready)
                      .map(([name]) => name),
                  ],
                }),
          },
          report.ready ? 200 : 503,
        );
      },
      { scope: false },
    );
    if (settings.metrics) {
      router.get(
        '/metrics',
        async (_req, res) => {
          const text = await this.metrics.render();
          res.header('content-type', this.metrics.contentType).header('cache-control', 'no-store').send(text);
        },
        { scope: settings.metricsAuth ? `${service}:read` : false },
      );
    }
  }

  /** The service's shutdown began: /readyz answers 503 from now on. */
  beginShutdown(): void {
    this.readiness.beginDrain();
  }

  close(): void {
    this.metrics.close();
  }
}
