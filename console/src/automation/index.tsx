// Placeholder until the automation section lands: the same export, no routes yet.

import type { Section } from '../section.js';

export const automationSection: Section = { id: 'automation', title: 'Automation', routes: [] };
