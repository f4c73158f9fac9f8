// Entry point of a front-end worker thread (see src/core/frontend.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { runFrontEnd, type FrontEndData } from '../src/core/frontend.js';

if (!parentPort) throw new Error('workers/frontend must run as a worker thread');
await runFrontEnd(workerData as FrontEndData, parentPort);
