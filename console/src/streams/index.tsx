import type { Section } from '../section.js';

export const streamsSection: Section = { id: 'streams', title: 'Streams', routes: [] };
