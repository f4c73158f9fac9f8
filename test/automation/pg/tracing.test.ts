// One trace per run across two automation nodes on one PostgreSQL: a run started on node A with
// a W3C traceparent is executed by node B (A's only pool thread is held by another run), and both
// nodes export spans of the caller's trace to an OTLP/HTTP receiver started here: A the start
// request, B the execution (a child of A's span, carried in the run record) and its step. The
// run's debug.traceId is that trace's id, and no span holds the run's input.

import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { postgresSkip } from '../../helpers/postgres.js';
import {
  attr,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../helpers/otlp-receiver.js';
import { waitUntil } from '../../helpers/wait.js';
import {
  api,
  GATED,
  gatedWorkflow,
  openCluster,
  registryRemote,
  startGated,
  TOKEN,
  type Cluster,
  type Node,
} from './nodes.js';

const TRACE_ID = '5c1c63257de34c67a0b1f3e9d2c4b8a1';
const CALLER_SPAN = '9e107d9d372bb682';

describe('run traces across two nodes', { skip: postgresSkip }, () => {
  let cluster: Cluster;
  let receiver: OtlpReceiver;
  let a: Node;
  let b: Node;

  before(async () => {
    receiver = await startOtlpReceiver();
    cluster = await openCluster('sluice-pg-traces-');
    const remote = registryRemote(cluster.dir, { [GATED]: gatedWorkflow('gated') });
    const env = {
      AUTOMATION_REGISTRY_URL: remote,
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_POOL_THREADS: '1',
      AUTOMATION_RUN_LEASE: '5s',
      TRACING_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    };
    a = cluster.node('a', { ...env, TRACING_SERVICE_INSTANCE_ID: 'node-a' });
    b = cluster.node('b', { ...env, TRACING_SERVICE_INSTANCE_ID: 'node-b' });
  });

  after(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  test('the start on A and the execution on B are spans of the caller trace', async () => {
    // Only A runs at first: its one pool thread takes a held run, so A cannot claim the next one.
    await a.start();
    const hold = cluster.gate();
    const held = await startGated(a, hold, 'hold');
    await waitUntil('the held run claimed by A', async () => {
      const r = await cluster.db.query<{ node: string }>(
        `SELECT node FROM runs WHERE id = $1 AND queue_state = 'claimed'`,
        [held],
      );
      return r.rows[0]?.node === 'a';
    });
    await b.start();
    const open = cluster.gate();
    writeFileSync(open, '');
    const res = await fetch(`${a.url}/api/v1/runs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      },
      body: JSON.stringify({ target: GATED, input: { gate: open, text: 'private-input-text' } }),
    });
    const started = (await res.json()) as { id: string };
    assert.ok(res.status === 201 || res.status === 200, JSON.stringify(started));
    const id = started.id;
    await waitUntil('the traced run to complete', async () => {
      const r = await api(b, 'GET', `/runs/${id}`);
      return r.body?.execution?.status === 'completed';
    });
    const ran = await cluster.db.query<{ node: string }>(`SELECT node FROM runs WHERE id = $1`, [id]);
    assert.equal(ran.rows[0]?.node, 'b', 'node B executed the run');
    for (const node of [a, b]) {
      const debug = await api(node, 'GET', `/runs/${id}?expand=debug`);
      assert.equal(debug.body.debug.traceId, TRACE_ID, `debug.traceId on node ${node.name}`);
    }

    const of = (name: string) => (spans: ReceivedSpan[]) =>
      spans.find((s) => s.span.traceId === TRACE_ID && s.span.name === name);
    await receiver.waitFor((spans) => !!of('run.start')(spans), 'the start span from A');
    await receiver.waitFor((spans) => !!of('step wait')(spans), 'the step span from B');
    await receiver.waitFor((spans) => !!of('run.execute')(spans), 'the execution span from B');
    const start = of('run.start')(receiver.spans)!;
    const execute = of('run.execute')(receiver.spans)!;
    const step = of('step wait')(receiver.spans)!;
    assert.equal(attr(start.resource, 'service.instance.id'), 'node-a');
    assert.equal(attr(start.resource, 'service.name'), 'sluice-automation');
    assert.equal(start.span.parentSpanId, CALLER_SPAN, 'the start span continues the caller');
    assert.equal(attr(start.span.attributes, 'automation.run_id'), id);
    assert.equal(attr(execute.resource, 'service.instance.id'), 'node-b');
    assert.equal(execute.span.parentSpanId, start.span.spanId, 'the execution is a child of the start');
    assert.equal(attr(execute.span.attributes, 'automation.node'), 'b');
    assert.equal(attr(execute.span.attributes, 'automation.status'), 'completed');
    assert.ok(execute.span.events?.some((e) => e.name === 'run.started'));
    assert.equal(step.span.parentSpanId, execute.span.spanId);
    assert.equal(attr(step.span.attributes, 'automation.step.status'), 'completed');
    const text = JSON.stringify(receiver.spans);
    assert.ok(!text.includes('private-input-text'), 'no run input in any span');
    writeFileSync(hold, '');
  });
});
