// The bytes of corrected (expected) files. They live in the run's own `expected/` folder, beside
// its `output/`, so the review bundle ZIP (GET /runs/{id}/artifacts?zip=1&bundle=review) finds
// them there. Names are single path segments, checked by the service before they get here.

import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeTemp, type TempFile } from '../files/blobs.js';

export interface ExpectedFileBytes {
  /** Streams an upload to a temporary file (TooLargeError past `limit`). */
  stage(source: AsyncIterable<Buffer>, limit: number): Promise<TempFile>;
  /** Drops a staged upload that was not kept. */
  unstage(temp: TempFile): Promise<void>;
  /** Moves a staged upload in as `name` (replacing a file of that name). */
  keep(runId: string, temp: TempFile, name: string): Promise<void>;
  /** Copies a file of the run (a path relative to the run folder, e.g. `output/a.md`) in as `name`. */
  copyFromRun(runId: string, runPath: string, name: string): Promise<void>;
  rename(runId: string, from: string, to: string): Promise<void>;
  remove(runId: string, name: string): Promise<void>;
  removeAll(runId: string): Promise<void>;
  /** The bytes of a corrected file; undefined when it is not on disk. */
  read(runId: string, name: string): Promise<AsyncIterable<Buffer> | undefined>;
  /** Reads a file of the run by its path relative to the run folder; undefined when absent. */
  readRunFile(runId: string, runPath: string): Promise<AsyncIterable<Buffer> | undefined>;
}

export class RunFolderExpectedFiles implements ExpectedFileBytes {
  constructor(
    private readonly runDir: (runId: string) => string,
    private readonly tmpDir: string,
  ) {}

  private dir(runId: string): string {
    return join(this.runDir(runId), 'expected');
  }

  stage(source: AsyncIterable<Buffer>, limit: number): Promise<TempFile> {
    return writeTemp(this.tmpDir, source, limit);
  }

  async unstage(temp: TempFile): Promise<void> {
    await rm(temp.path, { force: true });
  }

  async keep(runId: string, temp: TempFile, name: string): Promise<void> {
    await mkdir(this.dir(runId), { recursive: true });
    await rename(temp.path, join(this.dir(runId), name));
  }

  async copyFromRun(runId: string, runPath: string, name: string): Promise<void> {
    await mkdir(this.dir(runId), { recursive: true });
    await copyFile(join(this.runDir(runId), runPath), join(this.dir(runId), name));
  }

  async rename(runId: string, from: string, to: string): Promise<void> {
    await rename(join(this.dir(runId), from), join(this.dir(runId), to));
  }

  async remove(runId: string, name: string): Promise<void> {
    await rm(join(this.dir(runId), name), { force: true });
  }

  async removeAll(runId: string): Promise<void> {
    await rm(this.dir(runId), { recursive: true, force: true });
  }

  read(runId: string, name: string): Promise<AsyncIterable<Buffer> | undefined> {
    return openIfPresent(join(this.dir(runId), name));
  }

  readRunFile(runId: string, runPath: string): Promise<AsyncIterable<Buffer> | undefined> {
    return openIfPresent(join(this.runDir(runId), runPath));
  }
}

/** Checked before streaming, so a missing file is a 404 rather than a response cut short. */
async function openIfPresent(path: string): Promise<AsyncIterable<Buffer> | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  return createReadStream(path) as AsyncIterable<Buffer>;
}
