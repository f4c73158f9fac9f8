// Where each service lives. Loaded lazily so `sluice streams` never loads the rate limit code.

import type { ServiceModule, ServiceName } from './core/service.js';

export async function loadService(name: ServiceName): Promise<ServiceModule> {
  switch (name) {
    case 'ratelimit': {
      const m = await import('./ratelimit/index.js');
      return {
        start: m.startRatelimit,
        prepareShared: m.prepareRatelimitShared,
        allThreads: true,
        authHint: 'no authentication (as the upstream service); put it on a private network',
      };
    }
    case 'streams': {
      const m = await import('./streams/index.js');
      return { start: m.startStreams, allThreads: false, authHint: 'Authorization: Bearer <API key>' };
    }
    case 'automation': {
      const m = await import('./automation/index.js');
      return { start: m.startAutomation, allThreads: false, authHint: 'Authorization: Bearer <API key>' };
    }
  }
}
