// The hash router: `#/<section>/<path>?<query>`. Patterns are the sections' own (`/topics/:name`);
// the first section's first navigable route is the start page.

import { useEffect, useState } from 'preact/hooks';
import type { RouteMatch, Section, SectionRoute } from '../section.js';

export interface Location {
  section: string;
  path: string;
  query: URLSearchParams;
}

export function parseHash(hash: string): Location {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const pathPart = q >= 0 ? raw.slice(0, q) : raw;
  const query = new URLSearchParams(q >= 0 ? raw.slice(q + 1) : '');
  const parts = pathPart.split('/').filter((p) => p !== '');
  return { section: parts[0] ?? '', path: '/' + parts.slice(1).join('/'), query };
}

/** `{ id: 'x' }` when `pattern` `/runs/:id` matches `path` `/runs/x`; undefined otherwise. */
export function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter((p) => p !== '');
  const have = path.split('/').filter((p) => p !== '');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) {
      try {
        params[w.slice(1)] = decodeURIComponent(h);
      } catch {
        return undefined;
      }
    } else if (w !== h) return undefined;
  }
  return params;
}

export function resolve(
  sections: readonly Section[],
  location: Location,
): { section: Section; route: SectionRoute; match: RouteMatch } | undefined {
  const section = sections.find((s) => s.id === location.section);
  if (!section) return undefined;
  for (const route of section.routes) {
    const params = matchPattern(route.pattern, location.path);
    if (params) return { section, route, match: { params, query: location.query } };
  }
  return undefined;
}

/** `#/<section><path>` with each `:param` filled in and encoded. */
export function href(section: string, path: string, query?: Record<string, string>): string {
  const q = query ? new URLSearchParams(query).toString() : '';
  return `#/${section}${path === '/' ? '' : path}${q ? `?${q}` : ''}`;
}

export function navigate(to: string): void {
  window.location.hash = to.replace(/^#/, '');
}

export function useLocation(): Location {
  const [location, setLocation] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setLocation(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return location;
}
