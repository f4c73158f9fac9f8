// The archive worker's tasks (piscina entry: workers/automation-archive.ts). Each answers plain
// data: a result, or an ArchiveFailure for a refusal (400/413), so nothing depends on errors
// keeping their class across the thread boundary.

import { closeSync, fstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseExamples, placeEntries, type ParsedExample, type StagedFile } from '../datasets/archive.js';
import { ArchiveRefusal, refused, type ArchiveFailure, type ArchiveLimits } from './limits.js';
import { extractEntry, openArchive, readZipDirectory } from './zip-reader.js';
import { writeZip, type BuildEntry } from './zip-writer.js';

/** Lets tests hold a task at its start: [0] = 1 holds, [1] counts tasks waiting. */
type Gate = SharedArrayBuffer;

export interface ImportDatasetTask {
  kind: 'import-dataset';
  archive: string;
  /** Created by the task; every extracted file is named by its entry index, never by its name. */
  staging: string;
  limits: ArchiveLimits;
  gate: Gate;
}

export interface BuildTask {
  kind: 'build';
  out: string;
  entries: BuildEntry[];
  mtime: number;
  limits: ArchiveLimits;
  gate: Gate;
}

export type ArchiveTask = ImportDatasetTask | BuildTask;
export type ArchiveTaskResult =
  | { ok: true; kind: 'import-dataset'; examples: ParsedExample[] }
  | { ok: true; kind: 'build'; size: number }
  | ArchiveFailure;

function waitAtGate(gate: Gate) {
  const g = new Int32Array(gate);
  if (Atomics.load(g, 0) === 0) return;
  Atomics.add(g, 1, 1);
  while (Atomics.load(g, 0) === 1) Atomics.wait(g, 0, 1);
  Atomics.sub(g, 1, 1);
}

function importDataset(task: ImportDatasetTask): ParsedExample[] {
  const fd = openArchive(task.archive);
  try {
    const entries = readZipDirectory(fd, fstatSync(fd).size, task.limits);
    const { issues, placed } = placeEntries(entries);
    if (issues.length > 0) throw new ArchiveRefusal(refused(issues));
    mkdirSync(task.staging, { recursive: true, mode: 0o700 });
    const staged = new Map<string, StagedFile>();
    for (const entry of entries) {
      if (entry.isDirectory) continue;
      const file = join(task.staging, String(entry.index));
      extractEntry(fd, entry, file);
      staged.set(entry.name, { path: file, size: entry.size });
    }
    return parseExamples(placed, staged, (file) => readFileSync(file));
  } catch (err) {
    rmSync(task.staging, { recursive: true, force: true });
    throw err;
  } finally {
    closeSync(fd);
  }
}

export function runArchiveTask(task: ArchiveTask): ArchiveTaskResult {
  waitAtGate(task.gate);
  try {
    if (task.kind === 'import-dataset') return { ok: true, kind: task.kind, examples: importDataset(task) };
    return { ok: true, kind: task.kind, size: writeZip(task.out, task.entries, task.mtime, task.limits) };
  } catch (err) {
    if (err instanceof ArchiveRefusal) return err.failure;
    throw err;
  }
}
