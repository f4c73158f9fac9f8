// The console's entry point: read what this process serves (/console/config.json), point the
// service URLs at it, and draw the shell with the sections.

import { render } from 'preact';
import { automationSection } from './automation/index.js';
import { ratelimitSection } from './ratelimit/index.js';
import type { Section } from './section.js';
import { setServiceBases, type ServiceId } from './services.js';
import { App } from './shell/app.js';
import { loadConfig } from './shell/config.js';
import { streamsSection } from './streams/index.js';
import './styles.css';

const SECTIONS: readonly Section[] = [automationSection, streamsSection, ratelimitSection];

async function start(root: HTMLElement): Promise<void> {
  try {
    const config = await loadConfig();
    const bases: Partial<Record<ServiceId, string | null>> = {
      automation: null,
      streams: null,
      ratelimit: null,
    };
    for (const id of config.services) bases[id] = config.bases[id] ?? '';
    setServiceBases(bases);
    render(<App config={config} sections={SECTIONS} />, root);
  } catch (error) {
    const p = document.createElement('p');
    p.setAttribute('role', 'alert');
    p.className = 'error-box';
    p.textContent = `The console could not start: ${(error as Error).message}`;
    root.replaceChildren(p);
  }
}

const root = document.getElementById('app');
if (root) void start(root);
