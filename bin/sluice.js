#!/usr/bin/env node
// Entry point of the `sluice` command: runs the compiled CLI, building it first when needed.
import { rememberEarlyStop } from '../scripts/early-stop.js';
rememberEarlyStop(process.argv[2]);
const { ensureBuilt } = await import('../scripts/build-if-needed.js');
await ensureBuilt();
await import('../dist/src/cli.js');
