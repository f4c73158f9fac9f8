// The bytes of corrected (expected) files. They live in the run's own `expected/` folder, beside
// its `output/`, so the review bundle ZIP (GET /runs/{id}/artifacts?zip=1&bundle=review) finds
// them there. Names are single path segments, checked by the service before they get here.
// With several nodes (a shared blob store) each kept file is also put in the blob store and
// named by its sha256 in the review record; a node whose folder lacks it fetches it from there.

import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { notFound } from '../errors.js';
import type { BlobStore } from '../files/blob-store.js';
import { writeTemp, type TempFile } from '../files/blobs.js';
import { localCopy, runFilePath } from '../files/local-copy.js';
import { EXPECTED_DIR, expectedPath } from '../runs/folder.js';

/** A file named by where it is in the run folder and, when shared, by its blob. */
export interface SharedName {
  sha256?: string | undefined;
}

export interface ExpectedFileBytes {
  /** Streams an upload to a temporary file (TooLargeError past `limit`). */
  stage(source: AsyncIterable<Buffer>, limit: number): Promise<TempFile>;
  /** Drops a staged upload that was not kept. */
  unstage(temp: TempFile): Promise<void>;
  /**
   * Moves a staged upload in as `name` (replacing a file of that name); resolves with the
   * blob's sha256 when the bytes are shared with other nodes.
   */
  keep(runId: string, temp: TempFile, name: string): Promise<string | undefined>;
  /**
   * Copies a file of the run (`path` relative to the run folder, e.g. `output/a.md`) in as
   * `name`; resolves with the blob's sha256 when shared.
   */
  copyFromRun(runId: string, file: { path: string } & SharedName, name: string): Promise<string | undefined>;
  rename(runId: string, from: string, to: string): Promise<void>;
  remove(runId: string, name: string): Promise<void>;
  removeAll(runId: string): Promise<void>;
  /** The bytes of a corrected file; undefined when it is neither on disk nor shared. */
  read(runId: string, file: { name: string } & SharedName): Promise<AsyncIterable<Buffer> | undefined>;
  /** Reads a file of the run by its path relative to the run folder; undefined when absent. */
  readRunFile(runId: string, file: { path: string } & SharedName): Promise<AsyncIterable<Buffer> | undefined>;
}

export class RunFolderExpectedFiles implements ExpectedFileBytes {
  /** `shared`: the blob store other nodes read (several nodes); absent on one node. */
  constructor(
    private readonly runDir: (runId: string) => string,
    /** A file of the run on this node's disk (RunService.localFile); undefined when not stored. */
    private readonly runFile: (
      runId: string,
      file: { path: string } & SharedName,
    ) => Promise<string | undefined>,
    private readonly tmpDir: string,
    private readonly blobs: BlobStore,
    private readonly shared: boolean,
  ) {}

  private dir(runId: string): string {
    return join(this.runDir(runId), EXPECTED_DIR);
  }

  stage(source: AsyncIterable<Buffer>, limit: number): Promise<TempFile> {
    return writeTemp(this.tmpDir, source, limit);
  }

  async unstage(temp: TempFile): Promise<void> {
    await rm(temp.path, { force: true });
  }

  async keep(runId: string, temp: TempFile, name: string): Promise<string | undefined> {
    const shared = this.shared ? (await this.blobs.write(createReadStream(temp.path))).sha256 : undefined;
    await mkdir(this.dir(runId), { recursive: true });
    await rename(temp.path, join(this.dir(runId), name));
    return shared;
  }

  async copyFromRun(
    runId: string,
    file: { path: string } & SharedName,
    name: string,
  ): Promise<string | undefined> {
    const source = await this.runFile(runId, file);
    if (!source) throw notFound(`output file ${JSON.stringify(file.path)} of run ${runId}`, 'outputFileName');
    await mkdir(this.dir(runId), { recursive: true });
    await copyFile(source, join(this.dir(runId), name));
    return this.shared ? file.sha256 : undefined;
  }

  async rename(runId: string, from: string, to: string): Promise<void> {
    try {
      await rename(join(this.dir(runId), from), join(this.dir(runId), to));
    } catch (err) {
      // Shared: a file kept on another node is only in the blob store; its record is renamed.
      if (!(this.shared && (err as NodeJS.ErrnoException).code === 'ENOENT')) throw err;
    }
  }

  async remove(runId: string, name: string): Promise<void> {
    await rm(join(this.dir(runId), name), { force: true });
  }

  async removeAll(runId: string): Promise<void> {
    await rm(this.dir(runId), { recursive: true, force: true });
  }

  async read(runId: string, file: { name: string } & SharedName): Promise<AsyncIterable<Buffer> | undefined> {
    const path = runFilePath(this.runDir(runId), { path: expectedPath(file.name), ...file }, this.shared);
    await localCopy(this.blobs, path, file.sha256);
    return openIfPresent(path);
  }

  async readRunFile(
    runId: string,
    file: { path: string } & SharedName,
  ): Promise<AsyncIterable<Buffer> | undefined> {
    const path = await this.runFile(runId, file);
    return path === undefined ? undefined : openIfPresent(path);
  }
}

/** Checked before streaming, so a missing file is a 404 rather than a response cut short. */
async function openIfPresent(path: string): Promise<AsyncIterable<Buffer> | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  return createReadStream(path) as AsyncIterable<Buffer>;
}
