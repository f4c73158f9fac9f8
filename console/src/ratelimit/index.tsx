// The rate limit section: the loaded rules, live counters per rule, and dry-run requests.

import type { Section } from '../section.js';
import { RulesView } from './rules.js';
import { TrafficView } from './traffic.js';
import { TryView } from './try.js';

export const ratelimitSection: Section = {
  id: 'ratelimit',
  title: 'Rate limit',
  routes: [
    { pattern: '/rules', title: 'Configuration', nav: true, render: () => <RulesView /> },
    { pattern: '/traffic', title: 'Traffic', nav: true, render: () => <TrafficView /> },
    { pattern: '/try', title: 'Try a request', nav: true, render: () => <TryView /> },
  ],
};
