// A workflow is an ES module whose default export holds ordered, named steps. Steps run one
// after another; each one's output is recorded and visible to later steps as ctx.steps.<name>.
// overrides.steps.<name> replaces a step's output without running it (dataset examples use it).

import type { RunTask } from '../protocol.js';
import type { Reporter, RunContext } from './context.js';

export interface WorkflowStep {
  name: string;
  run(ctx: RunContext): unknown;
}

export interface WorkflowDefinition {
  steps: WorkflowStep[];
  output?: (ctx: RunContext) => unknown;
}

export function asWorkflow(mod: Record<string, unknown>): WorkflowDefinition {
  const def = (mod['default'] ?? mod['workflow'] ?? mod) as Partial<WorkflowDefinition>;
  if (!def || !Array.isArray(def.steps) || def.steps.length === 0) {
    throw new Error('workflow module must export default { steps: [{ name, run }] }');
  }
  const seen = new Set<string>();
  for (const step of def.steps) {
    if (!step || typeof step.name !== 'string' || typeof step.run !== 'function') {
      throw new Error('every workflow step needs a string name and a run function');
    }
    if (seen.has(step.name)) throw new Error(`duplicate step name ${JSON.stringify(step.name)}`);
    seen.add(step.name);
  }
  const out: WorkflowDefinition = { steps: def.steps };
  if (typeof def.output === 'function') out.output = def.output;
  return out;
}

export async function runWorkflow(
  def: WorkflowDefinition,
  task: RunTask,
  ctx: RunContext,
  reporter: Reporter,
  setStep: (name: string | undefined) => void,
): Promise<unknown> {
  const overrides = task.overrides.steps ?? {};
  let last: unknown = undefined;
  for (const [index, step] of def.steps.entries()) {
    ctx.throwIfCancelled();
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    if (Object.prototype.hasOwnProperty.call(overrides, step.name)) {
      last = overrides[step.name];
      ctx.steps[step.name] = last;
      reporter.send({
        t: 'step',
        step: {
          name: step.name,
          index,
          status: 'overridden',
          startedAt,
          completedAt: startedAt,
          durationMs: 0,
          output: last,
        },
      });
      continue;
    }
    reporter.event('step.started', undefined, { stepName: step.name, index });
    setStep(step.name);
    try {
      last = await step.run(ctx);
    } catch (err) {
      const completed = Date.now();
      const aborted = ctx.signal.aborted;
      reporter.send({
        t: 'step',
        step: {
          name: step.name,
          index,
          status: aborted ? 'cancelled' : 'failed',
          startedAt,
          completedAt: new Date(completed).toISOString(),
          durationMs: completed - started,
          error: err instanceof Error ? err.message : String(err),
        },
      });
      throw err;
    } finally {
      setStep(undefined);
    }
    ctx.steps[step.name] = last;
    const completed = Date.now();
    reporter.send({
      t: 'step',
      step: {
        name: step.name,
        index,
        status: 'completed',
        startedAt,
        completedAt: new Date(completed).toISOString(),
        durationMs: completed - started,
        output: last,
      },
    });
  }
  ctx.throwIfCancelled();
  return def.output ? await def.output(ctx) : last;
}
