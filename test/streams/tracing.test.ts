// Traces of the streams API: with TRACING_ENABLED=true a produce request and a consumer fetch are
// each a span exported over OTLP/HTTP to a receiver started here, continuing the caller's W3C
// traceparent, with the topic and counts and no keys or values; with tracing off nothing is sent.

import { strict as assert } from 'node:assert';
import { after, before, describe, test } from 'node:test';
import { attr, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { createTopic, newConsumer, startHarness, VND, type Harness } from './harness.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN}-01`;

async function call(h: Harness, method: string, path: string, body?: unknown, traceparent?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${h.token}`, accept: VND };
  if (body !== undefined) headers['content-type'] = VND;
  if (traceparent !== undefined) headers.traceparent = traceparent;
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(h.url + path, init);
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

describe('streams traces', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await receiver.close();
  });

  test('produce and fetch spans continue the traceparent and carry counts, not data', async () => {
    const h = await startHarness({
      TRACING_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      TRACING_SERVICE_INSTANCE_ID: 'streams-1',
    });
    let closed = false;
    try {
      await createTopic(h, 'orders', 3);
      const records = [
        { key: 'secret-key-1', value: { card: 'secret-value' } },
        { key: 'secret-key-2', value: { n: 2 } },
      ];
      const produced = await call(h, 'POST', '/streams/topic/orders', { records }, TRACEPARENT);
      assert.equal(produced.status, 200);
      const missing = await call(h, 'POST', '/streams/topic/nowhere', { records }, TRACEPARENT);
      assert.equal(missing.status, 404);
      const bogus = await call(h, 'POST', '/streams/topic/orders', { records }, 'bogus');
      assert.equal(bogus.status, 200, 'a malformed traceparent starts a new trace');
      const kafka = await fetch(`${h.url}/topics/orders`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${h.token}`,
          'content-type': 'application/vnd.kafka.json.v2+json',
          traceparent: `00-${'3'.repeat(32)}-${'4'.repeat(16)}-01`,
        },
        body: JSON.stringify({ records: [{ value: { n: 3 } }] }),
      });
      assert.equal(kafka.status, 200, await kafka.text());
      const path = await newConsumer(h, 'g1', ['orders'], { 'auto.offset.reset': 'earliest' });
      const fetchTrace = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
      let got = 0;
      for (let i = 0; i < 1000 && got < 5; i++) {
        const fetched = await call(h, 'GET', `${path}/records?timeout=200`, undefined, fetchTrace);
        assert.equal(fetched.status, 200);
        got += (fetched.body as unknown[]).length;
      }
      assert.equal(got, 5);
      // Closing the service flushes the spans still buffered.
      await h.close();
      closed = true;
    } finally {
      if (!closed) await h.close();
    }
    const spans = receiver.spans;
    const produce = spans.filter((s) => s.span.name === 'streams.produce');
    assert.equal(produce.length, 4);
    const confluent = produce.find((s) => s.span.traceId === '3'.repeat(32));
    assert.ok(confluent, 'the Confluent produce continues its traceparent');
    assert.equal(attr(confluent.span.attributes, 'streams.records'), 1);
    assert.ok(produce.some((s) => ![TRACE_ID, '3'.repeat(32)].includes(s.span.traceId)));
    const ok = produce.find(
      (s) => s.span.traceId === TRACE_ID && attr(s.span.attributes, 'streams.topic') === 'orders',
    )!;
    assert.equal(ok.span.traceId, TRACE_ID, 'continues the caller trace');
    assert.equal(ok.span.parentSpanId, PARENT_SPAN);
    assert.equal(ok.span.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(attr(ok.span.attributes, 'streams.records'), 2);
    assert.ok(Number(attr(ok.span.attributes, 'streams.partitions')) >= 1);
    assert.ok(Number(attr(ok.span.attributes, 'streams.bytes')) > 0);
    assert.equal(attr(ok.resource, 'service.name'), 'sluice-streams');
    assert.equal(attr(ok.resource, 'service.instance.id'), 'streams-1');
    const failed = produce.find((s) => attr(s.span.attributes, 'streams.topic') === 'nowhere')!;
    assert.equal(failed.span.status?.code, 2, 'STATUS_CODE_ERROR');
    const fetches = spans.filter((s) => s.span.name === 'streams.fetch' && s.span.traceId === '1'.repeat(32));
    assert.ok(fetches.length >= 1);
    const counted = fetches.reduce((n, s) => n + Number(attr(s.span.attributes, 'streams.records')), 0);
    assert.equal(counted, 5, 'the fetch spans count the records they returned');
    const withRecords = fetches.find((s) => Number(attr(s.span.attributes, 'streams.records')) > 0)!;
    assert.equal(attr(withRecords.span.attributes, 'streams.group'), 'g1');
    assert.equal(attr(withRecords.span.attributes, 'streams.topics'), 'orders');
    assert.ok(Number(attr(withRecords.span.attributes, 'streams.bytes')) > 0);
    const text = JSON.stringify(spans);
    assert.ok(!text.includes('secret'), 'no key or value in any span');
  });

  test('nothing is exported with tracing off (the default)', async () => {
    const before = receiver.spans.length;
    const h = await startHarness({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      await createTopic(h, 'quiet', 1);
      const produced = await call(
        h,
        'POST',
        '/streams/topic/quiet',
        { records: [{ value: { n: 1 } }] },
        TRACEPARENT,
      );
      assert.equal(produced.status, 200);
    } finally {
      await h.close();
    }
    assert.equal(receiver.spans.length, before);
  });
});
