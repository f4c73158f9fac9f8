// Starts a run from a dataset example: its input (with `$file` references pointed at the run's
// own snapshots of the example's input files), its input files and its step overrides.

import { basename, dirname } from 'node:path';
import type { Principal } from '../../core/auth/types.js';
import { invalid } from '../errors.js';
import { inputPath } from '../runs/folder.js';
import type { RunService, StagedInputFile } from '../runs/service.js';
import type { RunRecord } from '../runs/types.js';
import { checkRelativePath, collectFileRefs, splitFileRef } from './paths.js';
import type { ExampleRecord } from './types.js';

/** Where the run will hold an example input file: field <dir or "files">, file <name> (runs/folder.ts). */
function staged(path: string): { field: string; filename: string } {
  const dir = dirname(path);
  return { field: dir === '.' ? 'files' : dir, filename: basename(path) };
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const ref = obj['$file'];
    if (typeof ref === 'string' && Object.keys(obj).length === 1) {
      const parsed = splitFileRef(ref);
      if (parsed?.folder === 'input') {
        const s = staged(parsed.path);
        return { $file: inputPath(s.field, s.filename) };
      }
      return obj;
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, rewriteRefs(v)]));
  }
  return value;
}

export async function startExampleRun(
  runs: RunService,
  example: ExampleRecord,
  opts: {
    principal: Pick<Principal, 'tenant' | 'user'>;
    trigger: string;
    batchId?: string;
    version?: string;
  },
): Promise<RunRecord> {
  for (const { at, ref } of collectFileRefs(example.input)) {
    const parsed = splitFileRef(ref);
    if (parsed?.folder === 'input' && !example.files.input[parsed.path])
      throw invalid(
        `input.${at}`,
        `$file ${JSON.stringify(ref)} names no input file of example ${example.id}`,
      );
  }
  // Paths become folders of the run directory; one stored before archive names were checked
  // properly must not reach the file system.
  for (const path of Object.keys(example.files.input)) {
    const problem = checkRelativePath(path);
    if (problem)
      throw invalid(
        `files.input.${path}`,
        `example ${example.id} holds an unsafe input path: ${problem}`,
        'unsafe_path',
      );
  }
  const files: StagedInputFile[] = Object.entries(example.files.input).map(([path, ref]) => ({
    ...staged(path),
    contentType: ref.contentType,
    size: ref.size,
    sha256: ref.sha256,
    source: 'blob' as const,
    fileId: null,
  }));
  const overrides = example.overrides as { steps?: Record<string, unknown> } | null;
  return runs.start({
    target: example.automationId,
    ...(opts.version !== undefined ? { version: opts.version } : {}),
    input: rewriteRefs(example.input ?? {}),
    files,
    ...(overrides ? { overrides } : {}),
    metadata: { exampleId: example.id, exampleName: example.name },
    principal: opts.principal,
    trigger: opts.trigger,
    batchId: opts.batchId ?? null,
    exampleId: example.id,
  });
}
