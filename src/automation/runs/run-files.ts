// A run's files as this node reads them: its folder (`<runsDir>/<id>`: `input/<field>/<name>`,
// `output/<name>`, `expected/<name>`, and with several nodes the `.blobs/<sha256>` cache of
// shared files), an artifact by the path it is listed under, and the entries of its ZIPs.

import type { BuildEntry } from '../archives/zip-writer.js';
import type { BlobStore } from '../files/blob-store.js';
import { localCopy, runFilePath, writeRunFile } from '../files/local-copy.js';
import { expectedPath, outputPath, runFolder } from './folder.js';
import type { RunArtifact, RunRecord } from './types.js';

/** Content types stored as-is in a ZIP (already compressed). */
const COMPRESSED = /^(image\/(png|jpeg|gif|webp)|application\/(zip|gzip|pdf)|video\/|audio\/)/;

export class RunFiles {
  constructor(
    private readonly runsDir: string,
    private readonly blobs: BlobStore,
    /** Run files are read through the shared blob store (several nodes). */
    readonly shared: boolean,
    /** The bytes of an output file stored with its run (RunStore.keptFile). */
    private readonly keptFile: (runId: string, path: string) => Promise<Buffer | undefined>,
  ) {}

  runDir(runId: string): string {
    return runFolder(this.runsDir, runId);
  }

  /**
   * A file of the run on this node's disk: here already, fetched from the shared blob store (a
   * run executed or reviewed on another node), or written from the bytes stored with the run (an
   * output the worker kept off the disk); undefined when none has it.
   */
  async localFile(
    run: Pick<RunRecord, 'id'>,
    file: { path: string; sha256?: string | undefined },
  ): Promise<string | undefined> {
    const path = runFilePath(this.runDir(run.id), file, this.shared);
    if (await localCopy(this.blobs, path, file.sha256)) return path;
    if (file.sha256) return undefined;
    const content = await this.keptFile(run.id, file.path);
    if (!content) return undefined;
    await writeRunFile(path, content);
    return path;
  }

  /** The stored file behind an artifact path as listed (`output/report.md`), or an output's name. */
  async artifact(run: RunRecord, path: string): Promise<{ file: RunArtifact; absPath: string } | undefined> {
    const file =
      run.files.find((f) => f.path === path) ?? run.files.find((f) => f.role === 'output' && f.name === path);
    const absPath = file && (await this.localFile(run, file));
    return file && absPath ? { file, absPath } : undefined;
  }

  /**
   * The entries of an artifact ZIP: the output files, and for the review bundle (`expected`
   * given: the review's corrected files) expected/ too. A file neither here nor in the blob
   * store is left out.
   */
  async zipEntries(
    run: RunRecord,
    expected?: readonly { name: string; size: number; sha256?: string | undefined }[],
  ): Promise<{ entries: BuildEntry[]; bytes: number }> {
    const review = expected !== undefined;
    const entries: BuildEntry[] = [];
    let bytes = 0;
    for (const f of run.files.filter((x) => x.role === 'output')) {
      const file = await this.localFile(run, f);
      if (!file) continue;
      const name = review ? outputPath(f.name) : f.name;
      entries.push({ name, file, level: COMPRESSED.test(f.contentType) ? 0 : 6 });
      bytes += f.size;
    }
    for (const f of expected ?? []) {
      const file = await this.localFile(run, { path: expectedPath(f.name), sha256: f.sha256 });
      if (!file) continue;
      entries.push({ name: expectedPath(f.name), file, level: 6 });
      bytes += f.size;
    }
    return { entries, bytes };
  }
}
