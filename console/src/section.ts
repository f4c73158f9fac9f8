// The console is one page with a section per service. Each section registers the routes it
// draws; the shell owns sign-in, navigation and the frame around them. Routes are location
// hashes (`#/automation/runs/exec_1`), so a reload keeps the view and nothing reaches a URL
// that the server logs beyond the page itself.

import type { ComponentChildren } from 'preact';

export interface RouteMatch {
  /** Named parts of the pattern: `/runs/:id` matched by `/runs/exec_1` gives `{ id: 'exec_1' }`. */
  params: Record<string, string>;
  /** The query part of the hash (`#/runs?status=failed`). */
  query: URLSearchParams;
}

export interface SectionRoute {
  /** Below the section's own prefix, e.g. `/runs/:id` in the section `automation`. */
  pattern: string;
  title: string;
  /** Shown in the section's navigation when set. */
  nav?: boolean;
  render(match: RouteMatch): ComponentChildren;
}

export interface Section {
  /** `automation`, `streams` or `ratelimit`: the hash prefix and the service it talks to. */
  id: 'automation' | 'streams' | 'ratelimit';
  title: string;
  routes: SectionRoute[];
}
