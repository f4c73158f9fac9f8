#!/usr/bin/env node
// Entry point of the `sluice` command: runs the compiled CLI, building it first when needed.
import { ensureBuilt } from '../scripts/build-if-needed.js';
await ensureBuilt();
await import('../dist/src/cli.js');
