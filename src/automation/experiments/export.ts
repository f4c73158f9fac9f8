// Experiment result rows for CSV and JSON export: one row per evaluator result, and one row
// (empty evaluator columns, `error` set) for a run that produced no results, so both formats
// list the same runs. Rows are produced lazily and written out in chunks, so exporting every
// experiment of an automation never holds the whole document in memory.

import type { EvalResult } from '../runs/scores.js';
import type { ExperimentRecord } from './types.js';

export const EXPORT_COLUMNS = [
  'executionId',
  'exampleId',
  'exampleName',
  'batchId',
  'evaluatorName',
  'evaluatorType',
  'score',
  'passed',
  'label',
  'weight',
  'createdAt',
  'error',
] as const;

export type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number | boolean | null>;

export async function* exportRows(
  experiments: Iterable<ExperimentRecord>,
  scoresOf: (runId: string) => Promise<EvalResult[]>,
  runOf: (runId: string) => Promise<{ status: string; error: string | null } | undefined>,
): AsyncGenerator<ExportRow> {
  for (const exp of experiments)
    for (const ref of exp.runs) {
      const results = await scoresOf(ref.id);
      if (results.length === 0) {
        const run = await runOf(ref.id);
        const r = exp.results[ref.id];
        yield {
          executionId: ref.id,
          exampleId: ref.exampleId,
          exampleName: ref.exampleName,
          batchId: exp.id,
          evaluatorName: null,
          evaluatorType: null,
          score: r?.score ?? null,
          passed: r?.passed ?? false,
          label: null,
          weight: null,
          createdAt: new Date(ref.createdAt).toISOString(),
          error: run?.error ?? (run && run.status !== 'completed' ? `run ${run.status}` : null),
        };
        continue;
      }
      for (const e of results)
        yield {
          executionId: ref.id,
          exampleId: ref.exampleId,
          exampleName: ref.exampleName,
          batchId: exp.id,
          evaluatorName: e.evaluatorName,
          evaluatorType: e.evaluatorType,
          score: e.score,
          passed: e.passed,
          label: e.label,
          weight: e.weight,
          createdAt: e.createdAt,
          error: e.error,
        };
    }
}

/**
 * Spreadsheets run a cell that starts with = + - @ (or tab / CR before one) as a formula, so a
 * text cell starting with one of them gets a leading single quote, as OWASP "CSV Injection"
 * recommends; numbers and booleans are written as they are. Quoting is then RFC 4180: a cell
 * with a comma, quote, CR or LF is put in double quotes, inner quotes doubled.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(v: string | number | boolean | null): string {
  if (v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

type Rows = Iterable<ExportRow> | AsyncIterable<ExportRow>;

/** The whole CSV document as one string. */
export async function toCsv(rows: Rows): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of csvChunks(rows)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const CHUNK_CHARS = 64 * 1024;

/** The CSV document (header line first) in chunks of about 64 KiB. */
export async function* csvChunks(rows: Rows): AsyncGenerator<Buffer> {
  let buf = EXPORT_COLUMNS.join(',') + '\r\n';
  for await (const r of rows) {
    buf += EXPORT_COLUMNS.map((c) => csvCell(r[c])).join(',') + '\r\n';
    if (buf.length >= CHUNK_CHARS) {
      yield Buffer.from(buf, 'utf8');
      buf = '';
    }
  }
  yield Buffer.from(buf, 'utf8');
}

/** The JSON document, an array of the rows with their values as stored, in chunks. */
export async function* jsonChunks(rows: Rows): AsyncGenerator<Buffer> {
  let buf = '[';
  let first = true;
  for await (const r of rows) {
    buf += (first ? '' : ',') + JSON.stringify(r);
    first = false;
    if (buf.length >= CHUNK_CHARS) {
      yield Buffer.from(buf, 'utf8');
      buf = '';
    }
  }
  yield Buffer.from(buf + ']', 'utf8');
}
