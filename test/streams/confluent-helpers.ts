// Requests and checks shared by the Confluent REST Proxy v2 suites (confluent-suite.ts,
// confluent-endpoints.ts).

import { strict as assert } from 'node:assert';
import { request } from 'node:http';
import { waitUntil } from '../helpers/wait.js';
import type { Harness, Reply } from './harness.js';

export const V2 = 'application/vnd.kafka.v2+json';
export const JSON_V2 = 'application/vnd.kafka.json.v2+json';
export const BINARY_V2 = 'application/vnd.kafka.binary.v2+json';
export const AVRO_V2 = 'application/vnd.kafka.avro.v2+json';

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export function expectError(reply: Reply, status: number, code: number, message?: RegExp): void {
  assert.equal(reply.status, status, `${reply.status} ${reply.text}`);
  assert.equal(reply.body?.error_code, code, reply.text);
  assert.equal(typeof reply.body?.message, 'string');
  if (message) assert.match(reply.body.message, message);
}

/** Fetches with `accept` until `count` records arrived (records produced before are all readable). */
export async function fetchCount(h: Harness, path: string, count: number, accept: string): Promise<any[]> {
  const out: any[] = [];
  await waitUntil(
    `${count} records from ${path}`,
    async () => {
      const reply = await h.call('GET', `${path}/records?timeout=200`, { accept });
      if (reply.status !== 200) throw new Error(`fetch: ${reply.status} ${reply.text}`);
      out.push(...reply.body);
      return out.length >= count;
    },
    { intervalMs: 0 },
  );
  return out;
}

/** Only the fields Confluent's v2 records have (ours add timestamp and, when present, headers). */
export const confluentView = (r: any) => ({
  topic: r.topic,
  key: r.key,
  value: r.value,
  partition: r.partition,
  offset: r.offset,
});

export async function createConsumer(
  h: Harness,
  group: string,
  body: Record<string, unknown>,
): Promise<string> {
  const reply = await h.call('POST', `/consumers/${group}`, { body, type: V2, accept: V2 });
  assert.equal(reply.status, 200, reply.text);
  return new URL(reply.body.base_uri as string).pathname;
}

/** A GET with a JSON body (Confluent's committed-offsets call), over node:http. */
export function getWithBody(h: Harness, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      h.url + path,
      {
        method: 'GET',
        headers: {
          authorization: `Bearer ${h.token}`,
          'content-type': V2,
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
