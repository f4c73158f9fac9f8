// Downloads: the Content-Disposition header and streaming a file out with backpressure.

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { HttpResponse } from './types.js';

/**
 * `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266 with RFC 8187 for non-ASCII names):
 * the quoted form carries an ASCII stand-in for old clients, the starred form the exact name.
 */
export function contentDisposition(
  filename: string,
  disposition: 'attachment' | 'inline' = 'attachment',
): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return ascii === filename
    ? `${disposition}; filename="${ascii}"`
    : `${disposition}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

export interface SendFileOptions {
  contentType?: string;
  /** Sent as an attachment with this name. */
  filename?: string;
  status?: number;
}

/** Streams a file as the response body; stops quietly when the client goes away. */
export async function sendFile(
  res: HttpResponse,
  path: string,
  options: SendFileOptions = {},
): Promise<void> {
  await sendStream(res, createReadStream(path) as AsyncIterable<Buffer>, options);
}

/**
 * Streams a readable (a stored blob's content) as the response body, and releases it whatever
 * happens: a client that goes away mid-download leaves no open file or connection behind.
 */
export async function sendBody(
  res: HttpResponse,
  body: Readable,
  options: SendFileOptions = {},
): Promise<void> {
  try {
    await sendStream(res, body as AsyncIterable<Buffer>, options);
  } finally {
    body.destroy();
  }
}

/** Streams chunks as the response body; stops quietly when the client goes away. */
export async function sendStream(
  res: HttpResponse,
  chunks: AsyncIterable<Buffer>,
  options: SendFileOptions = {},
): Promise<void> {
  res.header('content-type', options.contentType ?? 'application/octet-stream');
  if (options.filename !== undefined) res.header('content-disposition', contentDisposition(options.filename));
  const out = res.stream(options.status ?? 200);
  try {
    for await (const chunk of chunks) {
      if (out.aborted) return;
      await out.write(chunk);
    }
  } catch (err) {
    if (out.aborted) return;
    throw err;
  }
  out.end();
}
