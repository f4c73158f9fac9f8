// Export documents written in chunks: whatever the chunk boundaries, the joined chunks are the
// whole CSV (header first, one CRLF line per row) and one JSON array of the rows.

import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  csvCell,
  csvChunks,
  EXPORT_COLUMNS,
  jsonChunks,
  type ExportRow,
} from '../../src/automation/experiments/export.js';

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

function rows(n: number): ExportRow[] {
  const base = Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, null])) as ExportRow;
  return Array.from({ length: n }, (_, i) => ({
    ...base,
    executionId: `run_${i}`,
    // Multi-byte text and quoting, so a boundary would show if chunks split characters or cells.
    exampleName: `é "${i}", ${'x'.repeat(200)}`,
    evaluatorName: i % 3 === 0 ? '=formula' : 'plain',
    score: i / n,
    passed: i % 2 === 0,
  }));
}

describe('experiment export chunks', () => {
  it('CSV chunks join to the header and one line per row', async () => {
    const list = rows(2000);
    const chunks = await collect(csvChunks(list));
    assert.ok(chunks.length > 1, 'a document past 64 KiB comes in several chunks');
    const expected =
      [EXPORT_COLUMNS.join(','), ...list.map((r) => EXPORT_COLUMNS.map((c) => csvCell(r[c])).join(','))].join(
        '\r\n',
      ) + '\r\n';
    assert.equal(Buffer.concat(chunks).toString('utf8'), expected);
  });

  it('JSON chunks join to one array of the rows as they are', async () => {
    const list = rows(2000);
    const chunks = await collect(jsonChunks(list));
    assert.ok(chunks.length > 1);
    assert.deepEqual(JSON.parse(Buffer.concat(chunks).toString('utf8')), list);
    assert.deepEqual(JSON.parse(Buffer.concat(await collect(jsonChunks([]))).toString('utf8')), []);
    assert.equal(
      Buffer.concat(await collect(csvChunks([]))).toString('utf8'),
      EXPORT_COLUMNS.join(',') + '\r\n',
    );
  });
});
