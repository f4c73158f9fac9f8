// Reads a newline-delimited JSON body (the experiment stream) line by line as it arrives, so the
// page shows each finished run when the server writes it rather than when the stream ends.

export async function readNdjson(
  body: ReadableStream<Uint8Array>,
  onLine: (value: unknown) => void,
  signal?: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  const abort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const line of splitter.push(decoder.decode(value, { stream: true }))) onLine(JSON.parse(line));
    }
    for (const line of splitter.push(decoder.decode() + '\n')) onLine(JSON.parse(line));
  } finally {
    signal?.removeEventListener('abort', abort);
    reader.releaseLock();
  }
}

/** Splits text chunks into complete, non-empty lines; a partial line waits for the next chunk. */
export class LineSplitter {
  private rest = '';

  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    return parts.map((p) => p.trim()).filter((p) => p.length > 0);
  }
}
