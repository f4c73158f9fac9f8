import type { Section } from '../section.js';

export const ratelimitSection: Section = { id: 'ratelimit', title: 'Rate limit', routes: [] };
