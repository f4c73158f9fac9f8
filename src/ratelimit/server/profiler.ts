// CPU profiles and heap snapshots of this thread through node:inspector — the Node counterpart
// of the upstream's /debug/pprof. Output opens in Chrome DevTools (.cpuprofile, .heapsnapshot).

import { Session } from 'node:inspector/promises';
import { CodedError } from '../../core/errors.js';

let busy = false;

export class ProfilerBusyError extends CodedError {
  constructor(message: string) {
    super('profiler_busy', message);
  }
}

async function withSession<T>(run: (session: Session) => Promise<T>): Promise<T> {
  if (busy) throw new ProfilerBusyError('a profile is already being taken');
  busy = true;
  const session = new Session();
  session.connect();
  try {
    return await run(session);
  } finally {
    session.disconnect();
    busy = false;
  }
}

export function cpuProfile(durationMs: number, signal?: AbortSignal): Promise<string> {
  return withSession(async (session) => {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, durationMs);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const { profile } = await session.post('Profiler.stop');
    await session.post('Profiler.disable');
    return JSON.stringify(profile);
  });
}

export function heapSnapshot(): Promise<string> {
  return withSession(async (session) => {
    const chunks: string[] = [];
    session.on('HeapProfiler.addHeapSnapshotChunk', (message) => chunks.push(message.params.chunk));
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    return chunks.join('');
  });
}
