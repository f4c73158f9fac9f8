// An OTLP/HTTP trace receiver for tests: a node:http server on a free loopback port taking
// POST /v1/traces with the JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends),
// keeping every span with its resource's attributes.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './wait.js';

export interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpKeyValue[];
  events?: { name: string; attributes: OtlpKeyValue[] }[];
  status?: { code?: number; message?: string };
}

export interface ReceivedSpan {
  span: OtlpSpan;
  resource: OtlpKeyValue[];
}

interface ExportRequest {
  resourceSpans: { resource: { attributes: OtlpKeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

export function attr(list: OtlpKeyValue[], key: string): string | number | boolean | undefined {
  const v = list.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.boolValue;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Waits (bounded, generously) until `match` holds for the spans received so far. */
  waitFor(match: (spans: ReceivedSpan[]) => boolean, what: string): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const rs of body.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const span of ss.spans) spans.push({ span, resource: rs.resource.attributes });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    waitFor: async (match, what) => {
      await waitUntil(what, () => match(spans));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
