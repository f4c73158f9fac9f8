// One Sluice automation node in its own process, for the multi-node tests: the AUTOMATION_*,
// TRACING_* and OTEL_EXPORTER_OTLP_* variables of its environment configure it; prints {"url", "smtpPort"}
// once listening; SIGTERM closes it cleanly, SIGKILL is a crash.
import { makeTestContext } from '../../helpers/context.js';
import { startAutomation } from '../../../src/automation/index.js';

const dataDir = process.env.NODE_DATA_DIR;
const token = process.env.NODE_TOKEN;
if (!dataDir || !token) throw new Error('NODE_DATA_DIR and NODE_TOKEN are required');
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    (e): e is [string, string] =>
      /^(AUTOMATION_|TRACING_|OTEL_EXPORTER_OTLP_)/.test(e[0]) && e[1] !== undefined,
  ),
);
const test = await makeTestContext({ dataDir, token, env });
const service = await startAutomation(test.ctx);
process.stdout.write(JSON.stringify({ url: service.url, smtpPort: service.smtpPort }) + '\n');
process.once('SIGTERM', () => {
  void service
    .close()
    .then(() => test.cleanup())
    .then(() => process.exit(0));
});
