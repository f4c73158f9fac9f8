// The review of a run and its corrected (expected) files: every rule the review routes apply, in
// one place. Routes (routes.ts) only translate HTTP to these calls; records go through the
// ReviewStore and file bytes through ExpectedFileBytes.

import { randomBytes } from 'node:crypto';
import { ApiError, invalid, notFound } from '../errors.js';
import type { TempFile } from '../files/blobs.js';
import { checkId } from '../http/ids.js';
import { outputPath } from '../runs/folder.js';
import type { RunService } from '../runs/service.js';
import { TERMINAL, type RunRecord } from '../runs/types.js';
import type { RunFile } from '../wire/common.js';
import type {
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileCopyRequest,
  RunReviewRequest,
} from '../wire/reviews.js';
import type { ExpectedFileBytes } from './expected-files.js';
import { KeyedSerial } from './serial.js';
import type { ReviewStore } from './store.js';
import type { ExpectedFile, ReviewRecord, ReviewStatus, StoredCorrection } from './types.js';
import { expectedFilesView, runReviewView } from './view.js';

export const newReviewId = () => `rev_${randomBytes(9).toString('hex')}`;
export const newCorrectionId = () => `corr_${randomBytes(9).toString('hex')}`;

/** An upload the route has read: the staged bytes and what the form said about them. */
export interface ReceivedUpload {
  temp: TempFile;
  filename: string;
  contentType: string;
  /** The form's `name` field, when sent. */
  name: string | undefined;
}

/** Reads the upload of a request, staging its bytes with the functions given. */
export type ReadUpload = (
  stage: (source: AsyncIterable<Buffer>, limit: number) => Promise<TempFile>,
  unstage: (temp: TempFile) => Promise<void>,
) => Promise<ReceivedUpload | undefined>;

export interface ReviewServiceDeps {
  runs: Pick<RunService, 'get' | 'store'>;
  store: ReviewStore;
  files: ExpectedFileBytes;
}

const FILE_NAME = /^[^/\\\0]{1,255}$/;

/** A corrected file's name is one path segment: it becomes a file name in the run's folder. */
export function checkFileName(name: string, field: string): string {
  if (!FILE_NAME.test(name) || name === '.' || name === '..')
    throw invalid(field, `invalid file name ${JSON.stringify(name)}: one path segment without slashes`);
  return name;
}

const conflict = (field: string, message: string) =>
  new ApiError(409, 'conflict', message, [{ field, message, code: 'conflict' }]);

export class ReviewService {
  private readonly serial = new KeyedSerial();

  constructor(private readonly deps: ReviewServiceDeps) {}

  /** A run of the caller's tenant; another tenant's run is a 404 like a missing one. */
  async run(tenant: string, id: string): Promise<RunRecord> {
    const run = await this.deps.runs.get(id);
    if (!run || run.tenant !== tenant) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    return run;
  }

  /** Reviews are of finished runs; the stored record is then final and safe to amend. */
  async finishedRun(tenant: string, id: string): Promise<RunRecord> {
    const run = await this.run(tenant, id);
    const stored = await this.deps.runs.store.get(run.id);
    if (!TERMINAL.has(run.status) || !stored || !TERMINAL.has(stored.status)) {
      const message = `run ${run.id} is ${run.status}; only finished runs can be reviewed`;
      throw new ApiError(409, 'run_not_finished', message, [
        { field: 'id', message, code: 'run_not_finished' },
      ]);
    }
    return stored;
  }

  review(run: RunRecord): Promise<ReviewRecord | undefined> {
    return this.deps.store.get(run);
  }

  private async existing(run: RunRecord): Promise<ReviewRecord> {
    const r = await this.deps.store.get(run);
    if (!r) throw notFound(`review of run ${JSON.stringify(run.id)} (PUT /runs/{id}/reviews first)`, 'id');
    return r;
  }

  async get(tenant: string, runId: string): Promise<RunReviewDetail> {
    const r = await this.review(await this.run(tenant, runId));
    return { review: r ? runReviewView(r) : null };
  }

  /**
   * Creates or replaces the review. Verdict and status are set by every PUT (an omitted verdict
   * is a nit; the status defaults from the verdict: `correct` closes, anything else stays open);
   * `note`, `correctedOutput` and `corrections` are kept when omitted, and `correctedOutput: null`
   * clears the corrected output.
   */
  put(tenant: string, runId: string, user: string, body: RunReviewRequest): Promise<RunReviewDetail> {
    return this.serial.run(runId, async () => {
      const run = await this.finishedRun(tenant, runId);
      const before = await this.deps.store.get(run);
      const now = Date.now();
      const verdict = body.verdict ?? null;
      const status: ReviewStatus = body.status ?? (verdict === 'correct' ? 'closed' : 'open');
      const note = body.note === undefined ? (before?.note ?? '') : (body.note ?? '');
      const wasClosed = before !== undefined && before.status !== 'open';
      const closing = status !== 'open';
      const review: ReviewRecord = {
        id: before?.id ?? newReviewId(),
        runId: run.id,
        automationId: run.automationId,
        verdict,
        status,
        note,
        corrections:
          body.corrections === undefined
            ? (before?.corrections ?? [])
            : corrections(body.corrections, before?.corrections ?? [], now),
        reviewedBy: user,
        reviewedAt: now,
        // Closing is recorded once: a review that stays closed keeps who closed it and when.
        closedBy: closing ? (wasClosed ? before.closedBy : user) : null,
        closedAt: closing ? (wasClosed ? before.closedAt : now) : null,
        closedNote: closing ? (wasClosed ? before.closedNote : note || null) : null,
        createdAt: before?.createdAt ?? now,
        updatedAt: now,
        expectedFiles: before?.expectedFiles ?? [],
      };
      const corrected =
        body.correctedOutput === undefined ? before?.correctedOutput : (body.correctedOutput ?? undefined);
      if (corrected !== undefined) review.correctedOutput = corrected;
      await this.deps.store.save(run, review);
      return { review: runReviewView(review) };
    });
  }

  /** Removes the review, its corrections and corrected files; the empty state either way. */
  clear(tenant: string, runId: string): Promise<RunReviewDetail> {
    return this.serial.run(runId, async () => {
      const run = await this.run(tenant, runId);
      if (await this.review(run)) {
        const stored = await this.finishedRun(tenant, runId);
        await this.deps.store.save(stored, null);
        await this.deps.files.removeAll(run.id);
      }
      return { review: null };
    });
  }

  async listExpected(tenant: string, runId: string): Promise<RunReviewExpectedArtifacts> {
    return { files: expectedFilesView(await this.review(await this.run(tenant, runId))) };
  }

  /** Adds an uploaded file (a file of the same name is replaced). */
  addUpload(tenant: string, runId: string, read: ReadUpload): Promise<RunFile> {
    return this.serial.run(runId, async () => {
      const run = await this.finishedRun(tenant, runId);
      await this.existing(run);
      const files = this.deps.files;
      const upload = await read(
        (source, limit) => files.stage(source, limit),
        (temp) => files.unstage(temp),
      );
      if (!upload) throw invalid('file', 'the multipart body has no file part');
      let name: string;
      try {
        name = checkFileName(upload.name ?? upload.filename, 'name');
      } catch (err) {
        await files.unstage(upload.temp);
        throw err;
      }
      // Read again: the record may have changed while the body streamed in.
      const review = await this.existing(run);
      const sha256 = await files.keep(run.id, upload.temp, name);
      return this.addFile(run, review, {
        name,
        size: upload.temp.size,
        contentType: upload.contentType,
        source: 'upload',
        ...(sha256 ? { sha256 } : {}),
      });
    });
  }

  /** Copies a run output file into the corrected files. */
  copyOutput(tenant: string, runId: string, body: RunReviewExpectedFileCopyRequest): Promise<RunFile> {
    return this.serial.run(runId, async () => {
      const run = await this.finishedRun(tenant, runId);
      const review = await this.existing(run);
      const wanted = body.outputFileName.replace(/^output\//, '');
      const artifact = run.files.find(
        (f) => f.role === 'output' && (f.name === wanted || f.path === outputPath(wanted)),
      );
      if (!artifact)
        throw notFound(
          `output file ${JSON.stringify(body.outputFileName)} of run ${run.id}`,
          'outputFileName',
        );
      const name = checkFileName(body.expectedName ?? wanted.split('/').pop()!, 'expectedName');
      const sha256 = await this.deps.files.copyFromRun(run.id, artifact, name);
      return this.addFile(run, review, {
        name,
        size: artifact.size,
        contentType: artifact.contentType,
        source: `output:${artifact.name}`,
        ...(sha256 ? { sha256 } : {}),
      });
    });
  }

  private async addFile(run: RunRecord, review: ReviewRecord, file: ExpectedFile): Promise<RunFile> {
    await this.saveFiles(run, review, [...review.expectedFiles.filter((f) => f.name !== file.name), file]);
    return { name: file.name };
  }

  private async saveFiles(run: RunRecord, review: ReviewRecord, files: ExpectedFile[]): Promise<void> {
    await this.deps.store.save(run, { ...review, expectedFiles: files, updatedAt: Date.now() });
  }

  renameExpected(tenant: string, runId: string, name: string, target: string): Promise<RunFile> {
    return this.serial.run(runId, async () => {
      const run = await this.finishedRun(tenant, runId);
      const review = await this.existing(run);
      checkFileName(target, 'name');
      if (!review.expectedFiles.some((f) => f.name === name))
        throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
      if (target !== name) {
        if (review.expectedFiles.some((f) => f.name === target))
          throw conflict('name', `expected file ${target} already exists`);
        await this.deps.files.rename(run.id, name, target);
        await this.saveFiles(
          run,
          review,
          review.expectedFiles.map((f) => (f.name === name ? { ...f, name: target } : f)),
        );
      }
      return { name: target };
    });
  }

  deleteExpected(tenant: string, runId: string, name: string): Promise<void> {
    return this.serial.run(runId, async () => {
      const run = await this.finishedRun(tenant, runId);
      const review = await this.existing(run);
      if (!review.expectedFiles.some((f) => f.name === name))
        throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
      await this.saveFiles(
        run,
        review,
        review.expectedFiles.filter((f) => f.name !== name),
      );
      await this.deps.files.remove(run.id, name);
    });
  }

  /** The bytes of a corrected file. */
  async openExpected(
    tenant: string,
    runId: string,
    name: string,
  ): Promise<{ file: ExpectedFile; chunks: AsyncIterable<Buffer> }> {
    const run = await this.run(tenant, runId);
    const file = (await this.review(run))?.expectedFiles.find((f) => f.name === name);
    const chunks = file ? await this.deps.files.read(run.id, file) : undefined;
    if (!file || !chunks) throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
    return { file, chunks };
  }
}

/**
 * The correction set a PUT sends replaces the stored one. A correction sent with the id of a
 * stored one keeps its id and creation time; one without an id gets a new `corr_` id.
 */
function corrections(
  sent: NonNullable<RunReviewRequest['corrections']>,
  stored: readonly StoredCorrection[],
  now: number,
): StoredCorrection[] {
  const seen = new Set<string>();
  return sent.map((c, i) => {
    const id = c.id === undefined ? newCorrectionId() : checkId(c.id, `corrections.${i}.id`);
    if (seen.has(id)) throw invalid(`corrections.${i}.id`, `correction id ${id} appears twice`);
    seen.add(id);
    const out: StoredCorrection = {
      id,
      kind: c.kind,
      path: c.path,
      label: c.label ?? null,
      note: c.note ?? '',
      createdAt: stored.find((s) => s.id === id)?.createdAt ?? now,
      updatedAt: now,
    };
    if (c.originalValue !== undefined) out.originalValue = c.originalValue;
    if (c.correctedValue !== undefined) out.correctedValue = c.correctedValue;
    if (c.correctedArtifactPath !== undefined) out.correctedArtifactPath = c.correctedArtifactPath;
    return out;
  });
}
