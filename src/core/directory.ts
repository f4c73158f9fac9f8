// Which services this process runs and on which HTTP port each one answers, as known inside one
// front-end thread. The web console needs both: the console is served by the automation port when
// the process runs automation, and it calls the other services on their own ports. Services
// publish their port once they listen; readers ask at request time, so the start order does not
// matter.

import type { ServiceName } from './service.js';

export class ServiceDirectory {
  private readonly ports = new Map<ServiceName, number>();

  constructor(
    /** Every service the process runs (on some thread), in start order. */
    readonly served: readonly ServiceName[],
  ) {}

  publish(service: ServiceName, httpPort: number): void {
    this.ports.set(service, httpPort);
  }

  /** The service's HTTP port when it runs on this thread and listens already. */
  port(service: ServiceName): number | undefined {
    return this.ports.get(service);
  }
}
