// The layout of a run's folder, `<runsDir>/<run id>/`, in one place: what the run's records
// name as a file's `path` (relative to the folder) and where this node keeps it.
//
//   input/<field>/<filename>   the run's input files, copied in at its start
//   output/<name>              what the automation wrote (its outputDir)
//   expected/<name>            the corrected files of its review
//   .blobs/<sha256>            with several nodes, shared files cached by content

import { join } from 'node:path';

const INPUT_DIR = 'input';
export const OUTPUT_DIR = 'output';
export const EXPECTED_DIR = 'expected';
/** The folder of a run's cache of shared files (retention/cache.ts bounds them all). */
export const BLOB_CACHE_DIR = '.blobs';

export function runFolder(runsDir: string, runId: string): string {
  return join(runsDir, runId);
}

/** The path of an input file, relative to the run's folder. */
export function inputPath(field: string, filename: string): string {
  return `${INPUT_DIR}/${field}/${filename}`;
}

/** The path of an output file, relative to the run's folder (also the artifact's listed path). */
export function outputPath(name: string): string {
  return `${OUTPUT_DIR}/${name}`;
}

/** The path of a corrected (expected) file, relative to the run's folder. */
export function expectedPath(name: string): string {
  return `${EXPECTED_DIR}/${name}`;
}

/** Where a shared file (named by its sha256) is cached in the run's folder. */
export function blobCachePath(runDir: string, sha256: string): string {
  return join(runDir, BLOB_CACHE_DIR, sha256);
}
