// Reading one message as it arrives (the only module that imports mailparser): its headers and
// text bodies kept, every attachment streamed to a temp file. The limits hold while the bytes
// come in: past the size limit or the attachment count, nothing more is parsed or written and
// the rest of the message is only drained, so the SMTP reply (552) can follow the DATA.

import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { MailParser, type AddressObject, type AttachmentStream, type MessageText } from 'mailparser';
import { writeTemp } from '../../files/blobs.js';

export interface MessageLimits {
  maxBytes: number;
  maxAttachments: number;
}

export interface ReceivedAttachment {
  /** The name as the message gave it (untrusted: confined before use, see names.ts). */
  filename: string | undefined;
  contentType: string;
  path: string;
  size: number;
  sha256: string;
}

export interface ReceivedMessage {
  messageId: string | undefined;
  subject: string;
  from: string;
  to: string[];
  date: string | null;
  text: string;
  html: string;
  attachments: ReceivedAttachment[];
}

export type ReadOutcome =
  { ok: ReceivedMessage } | { refused: 'too_large' | 'too_many_attachments' | 'unparsable'; message: string };

function addresses(value: unknown): string[] {
  const list = (Array.isArray(value) ? value : value ? [value] : []) as AddressObject[];
  return list.flatMap((o) => o.value.map((a) => a.address ?? '').filter((a) => a !== ''));
}

/** Reads `source` to its end (always, so the SMTP session can answer); temp files go to `tmpDir`. */
export async function readMessage(
  source: Readable,
  limits: MessageLimits,
  tmpDir: string,
  sizeExceeded: () => boolean,
): Promise<ReadOutcome> {
  // Only the plain bodies are needed: no HTML-to-text, no link rewriting.
  const parser = new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const attachments: ReceivedAttachment[] = [];
  const writes: Promise<void>[] = [];
  let headers: Map<string, unknown> | undefined;
  let text = '';
  let html = '';
  let bytes = 0;
  let stop: ReadOutcome | undefined;
  let parseError: Error | undefined;
  let count = 0;
  const open = new Set<AttachmentStream['content']>();

  const halt = (outcome: ReadOutcome) => {
    if (stop) return;
    stop = outcome;
    source.unpipe(parser);
    parser.removeAllListeners('data');
    parser.destroy();
    // Attachments being written end where they are (their temp files are removed below).
    for (const content of open) (content as Readable).destroy();
    // The rest of the message is read and dropped so the client gets its reply after DATA.
    source.resume();
  };

  parser.on('headers', (h: Map<string, unknown>) => {
    headers = h;
  });
  parser.on('error', (err: Error) => {
    parseError ??= err;
  });
  parser.on('data', (data: AttachmentStream | MessageText) => {
    if (data.type === 'text') {
      text = data.text ?? '';
      html = typeof data.html === 'string' ? data.html : '';
      return;
    }
    count += 1;
    if (count > limits.maxAttachments) {
      data.release();
      halt({
        refused: 'too_many_attachments',
        message: `more than ${limits.maxAttachments} attachments`,
      });
      return;
    }
    open.add(data.content);
    writes.push(
      writeTemp(tmpDir, data.content as Readable, limits.maxBytes)
        .finally(() => open.delete(data.content))
        .then(
          (temp) => {
            attachments.push({
              filename: data.filename,
              contentType: data.contentType || 'application/octet-stream',
              path: temp.path,
              size: temp.size,
              sha256: temp.sha256,
            });
            data.release();
          },
          (err: Error) => {
            data.release();
            halt({ refused: 'unparsable', message: `an attachment could not be stored: ${err.message}` });
          },
        ),
    );
  });

  const parsed = new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('close', resolve);
    parser.on('error', () => resolve());
  });
  source.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > limits.maxBytes || sizeExceeded())
      halt({ refused: 'too_large', message: `the message is over ${limits.maxBytes} bytes` });
  });
  const ended = new Promise<void>((resolve) => {
    source.on('end', resolve);
    source.on('close', resolve);
  });
  source.pipe(parser);
  await ended;
  if (!stop) await parsed;
  await Promise.allSettled(writes);
  const outcome: ReadOutcome = stop ??
    (parseError
      ? { refused: 'unparsable', message: `the message cannot be read: ${parseError.message}` }
      : undefined) ?? {
      ok: {
        messageId:
          typeof headers?.get('message-id') === 'string' ? (headers.get('message-id') as string) : undefined,
        subject: typeof headers?.get('subject') === 'string' ? (headers.get('subject') as string) : '',
        from: addresses(headers?.get('from'))[0] ?? '',
        to: addresses(headers?.get('to')),
        date: isoDate(headers?.get('date')),
        text,
        html,
        attachments,
      },
    };
  if (!('ok' in outcome)) await discardAttachments(attachments);
  return outcome;
}

/** A Date header as ISO text; null when absent or unreadable. */
function isoDate(value: unknown): string | null {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : null;
}

export async function discardAttachments(list: readonly { path: string }[]): Promise<void> {
  await Promise.all(list.map((a) => rm(a.path, { force: true })));
}
