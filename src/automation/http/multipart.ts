// multipart/form-data through busboy, fed from the core's body stream. Each file part is
// streamed straight to disk by `store` (never buffered whole); text parts are collected.

import busboy from 'busboy';
import type { Readable } from 'node:stream';
import type { HttpRequest } from '../../core/http/index.js';
import { ApiError } from '../errors.js';
import { TooLargeError } from '../files/blob-store.js';

export interface FilePart<T> {
  fieldName: string;
  filename: string;
  contentType: string;
  stored: T;
}

export interface Multipart<T> {
  fields: Record<string, string>;
  files: FilePart<T>[];
}

export function isMultipart(req: HttpRequest): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

export async function parseMultipart<T>(
  req: HttpRequest,
  limits: { fileBytes: number; files: number; fieldBytes: number; preservePath?: boolean },
  store: (source: AsyncIterable<Buffer>, limit: number) => Promise<T>,
  discard: (stored: T) => Promise<void>,
): Promise<Multipart<T>> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      limits: { files: limits.files, fieldSize: limits.fieldBytes, fields: 100 },
      // Dataset uploads name a file by its path inside a folder; busboy keeps only the base name otherwise.
      preservePath: limits.preservePath ?? false,
    });
  } catch (err) {
    throw new ApiError(400, 'invalid_multipart', `invalid multipart request: ${(err as Error).message}`);
  }
  const fields: Record<string, string> = {};
  const files: FilePart<T>[] = [];
  const pending: Promise<void>[] = [];
  let failure: Error | undefined;
  const fail = (err: unknown) => {
    failure ??= err instanceof Error ? err : new Error(String(err));
  };
  bb.on('field', (name, value, info) => {
    if (info.valueTruncated)
      fail(
        new ApiError(
          413,
          'payload_too_large',
          `form field ${name} is larger than ${limits.fieldBytes} bytes`,
        ),
      );
    fields[name] = value;
  });
  bb.on('file', (name, stream: Readable, info) => {
    // A form that ends inside a part (a complete body with a truncated form) destroys the part's
    // stream with "Unexpected end of form" after its reader may be done with it; unheard, that
    // error ends the thread. busboy reports the same error on the form, which answers 400.
    stream.on('error', () => undefined);
    // Not destroyed when the consumer stops early (too large): it is drained instead, so busboy
    // keeps reading the rest of the body and the request can be answered.
    const source = stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>;
    const work = store(source, limits.fileBytes).then(
      (stored) => {
        files.push({
          fieldName: name,
          filename: info.filename || 'file',
          contentType: info.mimeType || 'application/octet-stream',
          stored,
        });
      },
      (err: unknown) => {
        stream.resume();
        fail(
          err instanceof TooLargeError
            ? new ApiError(
                413,
                'payload_too_large',
                `file ${info.filename} is larger than ${err.limit} bytes`,
              )
            : err,
        );
      },
    );
    pending.push(work);
  });
  bb.on('filesLimit', () =>
    fail(new ApiError(413, 'payload_too_large', `more than ${limits.files} files in one request`)),
  );
  const finished = new Promise<void>((resolve, reject) => {
    bb.on('close', resolve);
    bb.on('error', (err: Error) =>
      reject(new ApiError(400, 'invalid_multipart', `invalid multipart request: ${err.message}`)),
    );
  });
  // When the body stream fails first (413 past the route's limit, client gone), `finished` is
  // never awaited and busboy's "Unexpected end of form" would be an unhandled rejection, which
  // ends the thread; the body's own failure is the one reported.
  finished.catch(() => undefined);
  try {
    for await (const chunk of req.bodyStream()) {
      if (!bb.write(chunk)) await new Promise((r) => bb.once('drain', r));
    }
    bb.end();
    await finished;
    await Promise.all(pending);
  } catch (err) {
    fail(err);
    bb.destroy();
    await Promise.allSettled(pending);
  }
  if (failure !== undefined) {
    await Promise.allSettled(files.map((f) => discard(f.stored)));
    throw failure;
  }
  return { fields, files };
}
