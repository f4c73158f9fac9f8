// piscina task entry point for automation runs (see src/automation/executor/pool.ts).
import { executeRun } from '../src/automation/executor/runtime/index.js';
import type { RunTask } from '../src/automation/executor/protocol.js';

export default async function run(task: RunTask): Promise<void> {
  await executeRun(task);
}
