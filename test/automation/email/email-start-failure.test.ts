// A start that fails late (the SMTP port is taken, after the API, run engine, scheduler and
// features are up) refuses with the bind error and releases what it opened: the same data
// directory starts again at once, in the same process.
import { strict as assert } from 'node:assert';
import { createServer } from 'node:net';
import { it } from 'node:test';
import { startAutomation } from '../../../src/automation/index.js';
import { makeTestContext } from '../../helpers/context.js';

const EMAIL = {
  AUTOMATION_SMTP_HOST: '127.0.0.1',
  AUTOMATION_EMAIL_DOMAIN: 'mail.test',
  AUTOMATION_EMAIL_SENDERS: '*@mail.test',
  // Never reached: no mail is accepted in this test.
  AUTOMATION_SMTP_RELAY: 'smtp://127.0.0.1:1',
};

it('a start whose SMTP port is taken fails, and the data starts again', async () => {
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  const port = (held.address() as { port: number }).port;
  const first = await makeTestContext({
    env: { AUTOMATION_POOL_THREADS: '1', AUTOMATION_SMTP_PORT: String(port), ...EMAIL },
  });
  try {
    await assert.rejects(startAutomation(first.ctx), new RegExp(`EADDRINUSE.*${port}`));

    // The same data directory, now without mail: the stores were closed and open again.
    const again = await makeTestContext({
      env: { AUTOMATION_POOL_THREADS: '1' },
      dataDir: first.dataDir,
    });
    const service = await startAutomation(again.ctx);
    try {
      const res = await fetch(`${service.url}/api/v1/auth/check`, {
        headers: { authorization: `Bearer ${again.token}` },
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    } finally {
      await service.close();
      await again.cleanup();
    }
  } finally {
    held.close();
    await first.cleanup();
  }
});
