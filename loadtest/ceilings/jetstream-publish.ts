// Ceiling for the JetStream produce scenarios: bare uWebSockets.js that parses the JSON body and
// publishes every record's value as its own JetStream message with the NATS client — all of a
// request's publishes in flight at once (async publish), the answer sent once JetStream
// acknowledged each one. This is the least a JSON produce endpoint on JetStream can do with
// records of this size: no batching, no offsets, no ordering guarantee across writers.
// With LOADTEST_JS_CEILING=batch it publishes each request's values as ONE message instead (the
// same bytes; what the service's one-message-per-append layout does, without offsets, expected
// sequences or the record encoding), the stricter ceiling for many records per request.
// The cluster comes from LOADTEST_NATS_URLS (started by the scenario's support code) and the
// stream is created here with LOADTEST_NATS_REPLICAS replicas. Load-test tooling, so it imports
// uWS and the NATS client directly (see uws-hello.ts).

import uWS from 'uWebSockets.js';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';

const port = Number(process.env['PORT'] ?? '0');
const urls = (process.env['LOADTEST_NATS_URLS'] ?? '').split(',').filter(Boolean);
const replicas = Number(process.env['LOADTEST_NATS_REPLICAS'] ?? '1');
const PARTITIONS = 4;
const batch = process.env['LOADTEST_JS_CEILING'] === 'batch';
if (urls.length === 0) {
  process.stderr.write('jetstream-publish: LOADTEST_NATS_URLS is not set (run a JetStream scenario)\n');
  process.exit(1);
}

const nc = await connect({ servers: urls });
const jsm = await jetstreamManager(nc);
const stream = `ceiling_${process.pid}`;
await jsm.streams.add({
  name: stream,
  subjects: [`ceiling.${process.pid}.*`],
  num_replicas: replicas,
});
const js = jetstream(nc, { timeout: 30_000 });
let rotate = 0;

const app = uWS.App();
app.post('/*', (res) => {
  let aborted = false;
  const chunks: Buffer[] = [];
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast || aborted) return;
    let records: Array<{ value: unknown }>;
    try {
      records = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { records: Array<{ value: unknown }> })
        .records;
    } catch {
      res.cork(() => res.writeStatus('400 Bad Request').end());
      return;
    }
    const subject = `ceiling.${process.pid}.${rotate++ % PARTITIONS}`;
    const publishes = batch
      ? [js.publish(subject, JSON.stringify(records.map((r) => r.value)))]
      : records.map((r) => js.publish(subject, JSON.stringify(r.value)));
    Promise.all(publishes).then(
      (acks) => {
        if (aborted) return;
        let text = '{"offsets":[';
        acks.forEach((a, i) => (text += `${i > 0 ? ',' : ''}{"seq":${a.seq}}`));
        res.cork(() => res.writeHeader('content-type', 'application/json').end(text + ']}'));
      },
      (error: unknown) => {
        if (aborted) return;
        res.cork(() => res.writeStatus('503 Service Unavailable').end(String(error)));
      },
    );
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});
app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    process.stderr.write(`jetstream-publish: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(token) }) + '\n');
  process.once('SIGTERM', () => {
    uWS.us_listen_socket_close(token);
    void jsm.streams
      .delete(stream)
      .catch(() => false)
      .finally(() => process.exit(0));
  });
});
