// Run traces on one node (LMDB, local queue): with TRACING_ENABLED=true a run started with a W3C
// traceparent is one trace (run.start, run.execute, one span per step) exported to an OTLP/HTTP
// receiver started here, debug.traceId is its id, a malformed traceparent starts a new trace,
// and no span holds the run's input or output.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { attr, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { loadTracingSettings } from '../../src/core/tracing/index.js';
import { EnvReader, SettingsError } from '../../src/core/settings/index.js';
import { loadStreamsSettings } from '../../src/streams/settings.js';
import { startHarness, type Harness } from './harness.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER = 'b7ad6b7169203331';

describe('run traces on one node', () => {
  let receiver: OtlpReceiver;
  let h: Harness;
  before(async () => {
    receiver = await startOtlpReceiver();
    h = await startHarness({ TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  });
  after(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('a run is one trace from the start request to its steps and end', async () => {
    const res = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: 'zebra-input quokka' } },
      headers: { traceparent: `00-${TRACE_ID}-${CALLER}-01` },
    });
    assert.equal(res.status, 200);
    const id = res.body.id as string;
    const debug = await h.api('GET', `/runs/${id}?expand=debug`);
    assert.equal(debug.body.debug.traceId, TRACE_ID);
    const mine = () => receiver.spans.filter((s) => s.span.traceId === TRACE_ID);
    await receiver.waitFor(
      () => mine().filter((s) => s.span.name.startsWith('step ')).length === 3 && mine().length === 5,
      'the start, execution and three step spans',
    );
    const start = mine().find((s) => s.span.name === 'run.start')!;
    const execute = mine().find((s) => s.span.name === 'run.execute')!;
    assert.equal(start.span.parentSpanId, CALLER);
    assert.equal(execute.span.parentSpanId, start.span.spanId);
    assert.equal(attr(start.resource, 'service.name'), 'sluice-automation');
    assert.equal(attr(execute.span.attributes, 'automation.run_id'), id);
    assert.equal(attr(execute.span.attributes, 'automation.status'), 'completed');
    const steps = mine()
      .filter((s) => s.span.name.startsWith('step '))
      .map((s) => [s.span.name, s.span.parentSpanId, attr(s.span.attributes, 'automation.step.index')]);
    assert.deepEqual(
      steps.sort((x, y) => Number(x[2]) - Number(y[2])),
      [
        ['step normalize', execute.span.spanId, 0],
        ['step analyze', execute.span.spanId, 1],
        ['step report', execute.span.spanId, 2],
      ],
    );
    const text = JSON.stringify(receiver.spans);
    assert.ok(!text.includes('zebra') && !text.includes('quokka'), 'no input or output in spans');
  });

  it('a malformed traceparent starts a new trace; the run still starts', async () => {
    const res = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: 'x' } },
      headers: { traceparent: 'not-a-traceparent' },
    });
    assert.equal(res.status, 200);
    const debug = await h.api('GET', `/runs/${res.body.id}?expand=debug`);
    assert.match(debug.body.debug.traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(debug.body.debug.traceId, TRACE_ID);
  });
});

describe('tracing settings shared by the services', () => {
  it('defaults the service name per service; TRACING_SERVICE_NAME overrides it', () => {
    assert.equal(
      loadTracingSettings(new EnvReader({}), 'sluice-automation').serviceName,
      'sluice-automation',
    );
    assert.equal(loadTracingSettings(new EnvReader({}), 'sluice-automation').enabled, false);
    assert.equal(loadStreamsSettings(new EnvReader({})).tracing.serviceName, 'sluice-streams');
    const named = loadStreamsSettings(new EnvReader({ TRACING_SERVICE_NAME: 'edge' }));
    assert.equal(named.tracing.serviceName, 'edge');
  });

  it('a bad TRACING_ENABLED or endpoint stops the streams start with the setting named', () => {
    assert.throws(
      () => loadStreamsSettings(new EnvReader({ TRACING_ENABLED: 'yes' })),
      (err: unknown) => err instanceof SettingsError && /TRACING_ENABLED/.test(err.message),
    );
    assert.throws(
      () => loadStreamsSettings(new EnvReader({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })),
      (err: unknown) =>
        err instanceof SettingsError && /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/.test(err.message),
    );
  });
});
