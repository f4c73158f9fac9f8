// `npm start`: build when needed, then run the CLI in this process (default command: serve all
// three services), so the stop signals npm passes on reach the supervisor directly.
import { rememberEarlyStop } from './early-stop.js';
if (process.argv.length <= 2) process.argv.push('serve');
rememberEarlyStop(process.argv[2]);
const { ensureBuilt } = await import('./build-if-needed.js');
await ensureBuilt();
await import('../dist/src/cli.js');
