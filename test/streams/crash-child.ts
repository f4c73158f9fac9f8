// A streams server in its own process, for the SIGKILL test: prints {"url","token"} once
// listening, then serves until killed.
import { makeTestContext } from '../helpers/context.js';
import { startStreams } from '../../src/streams/index.js';

const dataDir = process.env.CRASH_DATA_DIR;
if (!dataDir) throw new Error('CRASH_DATA_DIR is required');
const test = await makeTestContext({ dataDir });
const service = await startStreams(test.ctx);
process.stdout.write(JSON.stringify({ url: service.addresses.http, token: test.token }) + '\n');
