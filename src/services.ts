// Where each service lives, and what the core needs to know about it before loading it: a
// module is imported only in the threads that run it (and in the main thread only when it
// prepares shared memory), so `sluice streams` never loads the rate limit code.

import type { ServiceDescriptor, ServiceName } from './core/service.js';

const BEARER = 'Authorization: Bearer <API key>';

export const SERVICES: Readonly<Record<ServiceName, ServiceDescriptor>> = {
  ratelimit: {
    allThreads: true,
    sharedMemory: true,
    authHint: 'no authentication (as the upstream service); put it on a private network',
    async load() {
      const m = await import('./ratelimit/index.js');
      return { start: m.startRatelimit, prepareShared: m.prepareRatelimitShared };
    },
    async listeners(env, _core, threads) {
      return (await import('./ratelimit/server/listeners.js')).ratelimitListeners(env, threads);
    },
  },
  streams: {
    allThreads: false,
    sharedMemory: false,
    authHint: BEARER,
    async load() {
      return { start: (await import('./streams/index.js')).startStreams };
    },
    async listeners(_env, core) {
      return [{ service: 'streams', setting: 'STREAMS_PORT', ...core.streams }];
    },
  },
  automation: {
    allThreads: false,
    sharedMemory: false,
    authHint: BEARER,
    async load() {
      return { start: (await import('./automation/index.js')).startAutomation };
    },
    async listeners(_env, core) {
      return [{ service: 'automation', setting: 'AUTOMATION_PORT', ...core.automation }];
    },
  },
};
