import { createHash } from 'node:crypto';
import { EvaluatorError } from '../subject.js';
import type { EvalFiles, FileEqualsSpec, ScorerOutcome } from '../types.js';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) if (a[i] !== b[i]) return i;
  return n;
}

/** Byte-for-byte comparison of an output file with an expected file of the example. */
export async function scoreFileEquals(
  spec: FileEqualsSpec,
  files: EvalFiles | undefined,
): Promise<ScorerOutcome> {
  if (files === undefined) throw new EvaluatorError('no file access was given to the evaluator');
  const [actual, expected] = await Promise.all([
    files.readOutput(spec.outputFile),
    files.readExpected(spec.expectedFile),
  ]);
  if (expected === undefined)
    throw new EvaluatorError(`the example has no expected file "${spec.expectedFile}"`);
  const base = {
    outputFile: spec.outputFile,
    expectedFile: spec.expectedFile,
    expectedSize: expected.length,
    expectedSha256: sha256(expected),
  };
  if (actual === undefined)
    return { score: 0, details: { ...base, reason: 'the run has no such output file' } };
  const same =
    actual.length === expected.length &&
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected);
  const details: Record<string, unknown> = {
    ...base,
    outputSize: actual.length,
    outputSha256: sha256(actual),
  };
  if (!same) details.firstDifferenceAt = firstDifference(actual, expected);
  return { score: same ? 1 : 0, details };
}
