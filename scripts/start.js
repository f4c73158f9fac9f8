// `npm start`: build when needed, then run the CLI (default command: serve all three services).
import { ensureBuilt } from './build-if-needed.js';
await ensureBuilt();
if (process.argv.length <= 2) process.argv.push('serve');
await import('../dist/src/cli.js');
