// The RunQueue contract on the PostgreSQL queue (a private server, a database per case), through
// the port the run service uses (queuePort). A short lease (1 s) lets a lapsed run be taken over
// without a long wait; the holder renews its leases every third of it.

import { after, before } from 'node:test';
import { migrate } from '../../../src/automation/pg/migrations.js';
import { PgDatabase } from '../../../src/automation/pg/pool.js';
import { PgRunQueue } from '../../../src/automation/pg/run-queue.js';
import { queuePort } from '../../../src/automation/pg/queue/port.js';
import { PgRunStore } from '../../../src/automation/pg/stores/runs.js';
import { runQueueContract } from '../contracts/run-queue.contract.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';

let server: PostgresServer | undefined;
before(async () => {
  if (!postgresSkip) server = await startPostgres();
});
after(async () => {
  await server?.stop();
});

runQueueContract(
  'PostgreSQL',
  async (limits) => {
    const db = new PgDatabase({ url: await server!.createDatabase(), poolSize: 4 });
    await migrate(db);
    const queue = new PgRunQueue(db, { nodeId: 'node-a', leaseMs: 1000, ...limits });
    await queue.start();
    return {
      queue: queuePort(queue),
      store: new PgRunStore(db),
      async leaseExpiry(runId) {
        const { rows } = await db.query<{ ms: string | null }>(
          'SELECT (extract(epoch FROM lease_expires_at) * 1000)::bigint AS ms FROM runs WHERE id = $1',
          [runId],
        );
        return rows[0]?.ms ? Number(rows[0].ms) : undefined;
      },
      async close() {
        await queue.close();
        await db.close();
      },
    };
  },
  postgresSkip,
);
