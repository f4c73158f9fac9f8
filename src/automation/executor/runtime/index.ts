// Runs one automation run inside a pool worker. Everything the run does is reported on the
// thread's channel to the main thread; a cooperative cancel arrives as `signal`.

import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { RunTask } from '../protocol.js';
import { createContext, Reporter, type ReportPort } from './context.js';
import { asWorkflow, runWorkflow } from './workflow.js';
import { runAgent, toolsFromModule } from './agent.js';

async function loadModule(task: RunTask): Promise<Record<string, unknown>> {
  // The package directory is keyed by commit, so each version gets its own module URL and
  // old versions keep their own code in a long-lived worker.
  return (await import(pathToFileURL(join(task.packageDir, task.entry)).href)) as Record<string, unknown>;
}

export async function executeRun(
  task: RunTask,
  port: ReportPort,
  controller: AbortController,
): Promise<void> {
  const reporter = new Reporter(port, task.runId);
  let step: string | undefined;
  const ctx = createContext(task, reporter, controller.signal, () => step);
  reporter.send({ t: 'started', at: new Date().toISOString() });
  try {
    let output: unknown;
    if (task.kind === 'workflow') {
      const def = asWorkflow(await loadModule(task));
      output = await runWorkflow(def, task, ctx, reporter, (name) => (step = name));
    } else {
      const mod = task.entry ? await loadModule(task) : undefined;
      output = await runAgent(task, ctx, reporter, toolsFromModule(mod));
    }
    reporter.send({ t: 'done', ok: true, output: output ?? null, at: new Date().toISOString() });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    reporter.send({
      t: 'done',
      ok: false,
      error: message,
      cancelled: controller.signal.aborted,
      at: new Date().toISOString(),
    });
  }
}
