// Where each service's API is, as seen from the page. The shell sets the bases once at start
// from what the serving process reports (an empty base means the origin that served the page);
// views only ever build URLs through serviceUrl.

export type ServiceId = 'automation' | 'streams' | 'ratelimit';

const bases: Record<ServiceId, string | null> = { automation: '', streams: '', ratelimit: '' };

/** `null` marks a service this process does not serve; its section shows that instead of failing. */
export function setServiceBases(next: Partial<Record<ServiceId, string | null>>): void {
  Object.assign(bases, next);
}

export function serviceServed(service: ServiceId): boolean {
  return bases[service] !== null;
}

export function serviceUrl(service: ServiceId, path: string): string {
  return (bases[service] ?? '') + path;
}
