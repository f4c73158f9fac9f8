// piscina task entry for archive work (src/automation/archives/pool.ts).
export { runArchiveTask as default } from '../src/automation/archives/tasks.js';
