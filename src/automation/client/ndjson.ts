// Reads a newline-delimited JSON body one record at a time.
import { ClientError } from './errors.js';

/**
 * Yields each non-empty line of `body` parsed as JSON. `onChunk` runs whenever bytes arrive (the
 * transport uses it to restart its idle timer). Breaking out of the loop cancels the body.
 */
export async function* readNdjson<T = unknown>(
  body: ReadableStream<Uint8Array>,
  onChunk: () => void = () => {},
  requestId?: string,
): AsyncGenerator<T, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let lineNumber = 0;
  const parse = (line: string): T => {
    lineNumber += 1;
    try {
      return JSON.parse(line) as T;
    } catch (error) {
      throw new ClientError(
        `NDJSON line ${lineNumber} is not JSON: ${line.slice(0, 120)}`,
        'invalid_response',
        {
          requestId,
          cause: error,
        },
      );
    }
  };
  let done = false;
  try {
    while (true) {
      const next = await reader.read();
      if (next.done) break;
      onChunk();
      buffered += decoder.decode(next.value, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line.length > 0) yield parse(line);
        newline = buffered.indexOf('\n');
      }
    }
    buffered += decoder.decode();
    const last = buffered.trim();
    if (last.length > 0) yield parse(last);
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
