// The PostgreSQL queue seen through the run queue port (src/automation/runs/queue.ts).

import type { RunQueue } from '../../runs/queue.js';
import type { PgRunQueue } from '../run-queue.js';

/**
 * The run service's view of the queue (the RunQueue port, src/automation/runs/queue.ts). Runs
 * a stopped process held come back through their expired leases, and runs stored but never
 * queued are queued at each (re)connection (backend.ts), so recovery has nothing to do here.
 */
export function queuePort(queue: PgRunQueue): RunQueue {
  return {
    nodeId: queue.nodeId,
    queuedCount: (bound) => queue.queuedCount(bound),
    claim: (limit) => queue.claim(limit),
    createQueued: (run, detail, events, options) => queue.createQueued(run, detail, events, options),
    createClaimed: (run, detail, events, options) => queue.createClaimed(run, detail, events, options),
    completeWith: (runId, status, end) => queue.completeWith(runId, status, end),
    release: (runId) => queue.release(runId),
    forget: (runId) => queue.forget(runId),
    cancel: (runId) => queue.cancel(runId),
    // The done notification names the run and its status only: the record is this node's end
    // of it when it wrote that end, else the waiter reads it.
    waitForDone: (runId) => queue.waitForDone(runId).then(() => queue.endWrittenHere(runId)),
    recover: () => Promise.resolve({ requeued: 0, interrupted: [] }),
    // A start is stored (committed) before createQueued/createClaimed resolve; one answered at its
    // end only may not be durable yet.
    committed: (runId) => queue.committed(runId),
    onWake: (listener) => void queue.on('wake', listener),
    onCancel: (listener) => void queue.on('cancel', (e) => listener(e.runId)),
    onLost: (listener) => void queue.on('lost', (e) => listener(e.runId)),
  };
}
