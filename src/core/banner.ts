// The start banner the supervisor prints once every service of every thread listens: where each
// listener is bound (and, for a wildcard bind, a URL that reaches it from this machine), where the
// web console is, what each service stores its data in, and how to authenticate. Also the helpers
// services use to describe a backend without leaking a credential.

import type { FrontEndMessage } from './frontend.js';

type Ready = Extract<FrontEndMessage, { type: 'ready' }>;

/**
 * `scheme://host:port/path` of a backend URL with the user, password and query left out (a
 * query may carry a password too). Something that is not a URL is shown as its scheme alone.
 */
export function describeEndpoint(text: string): string {
  try {
    const url = new URL(text);
    const path = url.pathname === '/' ? '' : url.pathname;
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text);
    return scheme ? `${scheme[0]}…` : '…';
  }
}

/**
 * For a URL bound to every interface (0.0.0.0, ::), the same URL on the loopback address, which
 * a browser or curl on this machine reaches; undefined for any other URL.
 */
export function loopbackUrl(address: string): string | undefined {
  const m = /^(\w+:\/\/)?(0\.0\.0\.0|\[::\])(:\d+.*)?$/.exec(address);
  if (!m) return undefined;
  return `${m[1] ?? ''}${m[2] === '[::]' ? '[::1]' : '127.0.0.1'}${m[3] ?? ''}`;
}

export interface BannerInput {
  services: readonly string[];
  threads: number;
  dataDir: string;
  ready: readonly Ready[];
  /** Service → how to authenticate. */
  authHints: Readonly<Record<string, string>>;
}

/** The lines of the banner (without the first-start key, which the supervisor adds). */
export function bannerLines(input: BannerInput): string[] {
  const lines = [
    `sluice: ${input.services.join(', ')} listening on ${input.threads} front-end thread(s); data in ${input.dataDir}`,
  ];
  const first = input.ready[0];
  if (first) lines.push(`  http transport: ${first.transport}`);
  // Threads share most ports; a listener that differs per thread (GRPC_THREAD_PORTS) lists each.
  const listing = new Map<string, Map<string, Set<string>>>();
  const backends = new Map<string, Map<string, string>>();
  for (const message of input.ready) {
    for (const [service, listeners] of Object.entries(message.addresses)) {
      const byListener = listing.get(service) ?? new Map<string, Set<string>>();
      listing.set(service, byListener);
      for (const [listener, address] of Object.entries(listeners)) {
        const set = byListener.get(listener) ?? new Set<string>();
        set.add(address);
        byListener.set(listener, set);
      }
    }
    for (const [service, stores] of Object.entries(message.backends)) {
      const byStore = backends.get(service) ?? new Map<string, string>();
      backends.set(service, byStore);
      for (const [store, where] of Object.entries(stores)) byStore.set(store, where);
    }
  }
  let console: string | undefined;
  for (const service of input.services) {
    for (const [listener, addresses] of listing.get(service) ?? []) {
      const shown = [...addresses].map((a) => {
        const local = loopbackUrl(a);
        return local ? `${a} (${local})` : a;
      });
      lines.push(`  ${service.padEnd(10)} ${listener.padEnd(8)} ${shown.join(', ')}`);
    }
    for (const [store, where] of backends.get(service) ?? [])
      lines.push(`  ${service.padEnd(10)} ${store.padEnd(8)} ${where}`);
    lines.push(`  ${service.padEnd(10)} auth     ${input.authHints[service] ?? ''}`);
  }
  // The console is served by the automation port when the process runs automation, else by the
  // one service's own HTTP port (src/core/console/routes.ts).
  const host = input.services.includes('automation') ? 'automation' : input.services[0];
  const http = host ? [...(listing.get(host)?.get('http') ?? [])][0] : undefined;
  if (http) {
    const origin = /^\w+:\/\/[^/]+/.exec(http)?.[0];
    if (origin) console = `${loopbackUrl(origin) ?? origin}/console/`;
  }
  if (console) lines.push(`  console    ${console}`);
  return lines;
}
