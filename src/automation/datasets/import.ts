// The first half of a dataset import: the upload to a temp file, the import mode (the form field
// `mode` as the SDK sends it, or the query parameter), and the archive read, checked and extracted
// by an archive worker. The caller stores the result and then calls discard(), which removes
// every temp file whatever happened.

import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid } from '../errors.js';
import { receiveArchive } from '../archives/transfer.js';
import type { ArchiveLimits } from '../archives/limits.js';
import type { ArchivePool } from '../archives/pool.js';
import type { ParsedExample } from './archive.js';

export async function receiveDataset(
  req: HttpRequest,
  q: { tmpDir: string; archiveLimits: ArchiveLimits; archives: Pick<ArchivePool, 'importDataset'> },
  queryMode: string | undefined,
): Promise<{ mode: 'append' | 'replace'; parsed: ParsedExample[]; discard: () => Promise<void> }> {
  const upload = await receiveArchive(req, q.tmpDir, q.archiveLimits);
  const staging = join(q.tmpDir, `import-${randomBytes(12).toString('hex')}`);
  const discard = async () => {
    await upload.discard();
    await rm(staging, { recursive: true, force: true });
  };
  try {
    const formMode = upload.fields['mode'];
    if (formMode !== undefined && queryMode !== undefined && formMode !== queryMode)
      throw invalid('mode', `the form says mode=${formMode} and the query mode=${queryMode}`);
    const mode = formMode ?? queryMode ?? 'append';
    if (mode !== 'append' && mode !== 'replace') throw invalid('mode', 'mode must be append or replace');
    const parsed = await q.archives.importDataset(upload.path, staging, q.archiveLimits);
    return { mode, parsed, discard };
  } catch (err) {
    await discard();
    throw err;
  }
}
