// Pool thread for automation runs (see src/automation/executor/pool.ts): runs posted on the
// thread's port are executed one at a time; a cancel names the run it is for.
import { parentPort } from 'node:worker_threads';
import { executeRun } from '../src/automation/executor/runtime/index.js';
import type { PoolMessage, RunReport } from '../src/automation/executor/protocol.js';

const port = parentPort!;
let current: { runId: string; controller: AbortController } | undefined;

port.on('message', (msg: PoolMessage) => {
  if (msg.t === 'cancel') {
    if (current?.runId === msg.runId && !current.controller.signal.aborted)
      current.controller.abort(msg.reason);
    return;
  }
  const run = { runId: msg.task.runId, controller: new AbortController() };
  current = run;
  void executeRun(
    msg.task,
    { postMessage: (report: RunReport) => port.postMessage(report) },
    run.controller,
  ).finally(() => {
    if (current === run) current = undefined;
  });
});
