// Run artifacts: the list, one artifact's bytes, and ZIPs (outputs only; or the review bundle
// with output/ and expected/). The ZIP may be fetched with a signed token instead of a key; it is
// written by an archive worker and streamed (src/automation/archives/).

import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { hasScope } from '../../core/auth/types.js';
import { HttpError, type HttpRequest } from '../../core/http/index.js';
import { sendArchive } from '../archives/transfer.js';
import type { BuildEntry } from '../archives/zip-writer.js';
import { invalid, notFound, ApiError } from '../errors.js';
import * as S from '../openapi/schemas.js';
import type { ApiDeps, ApiRoute } from './api.js';
import { ownRun } from './runs.js';
import { parseQuery } from './validate.js';

const COMPRESSED = /^(image\/(png|jpeg|gif|webp)|application\/(zip|gzip|pdf)|video\/|audio\/)/;

/** Regular files under `dir` (symlinks are not followed), with their sizes for the limits. */
async function listDir(dir: string): Promise<{ name: string; size: number }[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    const out: { name: string; size: number }[] = [];
    for (const e of entries.filter((x) => x.isFile())) {
      const path = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
      out.push({ name: relative(dir, path).split(sep).join('/'), size: (await stat(path)).size });
    }
    return out;
  } catch {
    return [];
  }
}

export function artifactRoutes(deps: ApiDeps): ApiRoute[] {
  const { runs, tokens } = deps;

  /** Bearer key check done here because the route also admits a signed token instead. */
  function requireKey(req: HttpRequest): string {
    const header = req.headers['authorization'];
    const match = header ? /^Bearer\s*:?\s+(\S+)\s*$/i.exec(header) : null;
    if (!match)
      throw new HttpError(
        401,
        'unauthorized',
        'missing bearer token: send Authorization: Bearer <API key> or a download token',
        undefined,
        { 'www-authenticate': 'Bearer' },
      );
    const principal = deps.auth.authenticate(match[1]!);
    if (!principal)
      throw new HttpError(401, 'unauthorized', 'invalid or revoked API key', undefined, {
        'www-authenticate': 'Bearer error="invalid_token"',
      });
    if (!hasScope(principal, 'automation:read'))
      throw new HttpError(403, 'forbidden', 'this API key lacks the scope automation:read');
    req.principal = principal;
    return principal.tenant;
  }

  return [
    {
      method: 'GET',
      path: '/runs/{id}/artifacts',
      operationId: 'listRunArtifacts',
      summary:
        'Artifact paths; zip=1 gives a ZIP of output files; bundle=review adds expected/; token opens the ZIP without a key',
      tag: 'runs',
      public: true,
      query: S.ArtifactsQuery,
      responses: {
        200: { description: 'artifact list (JSON) or ZIP bytes when zip=1', schema: S.RunArtifactsResponse },
      },
      async handle(req, res) {
        const q = parseQuery<{ zip?: string; bundle?: 'review'; token?: string }>(
          S.ArtifactsQuery,
          req.query,
        );
        const zip = q.zip === '1' || q.zip === 'true';
        const bundle = q.bundle ?? '';
        let run;
        if (q.token !== undefined) {
          if (!zip)
            throw new ApiError(403, 'token_scope', 'a download token is valid only for the ZIP (zip=1)');
          run = deps.runs.get(req.params['id']!);
          const verdict = run ? tokens.verify(q.token, run.id, bundle) : 'invalid';
          if (!run || verdict !== 'ok') {
            throw new ApiError(
              401,
              verdict === 'expired' ? 'token_expired' : 'invalid_token',
              verdict === 'expired'
                ? 'the download token has expired'
                : 'the download token is not valid for this download',
            );
          }
        } else {
          run = ownRun(deps, req, requireKey(req));
        }
        const dir = runs.runDir(run.id);
        const outputs = run.files.filter((f) => f.role === 'output');
        if (!zip) {
          const link = tokens.issue(run.id, bundle);
          const zipUrl = `/api/v1/runs/${encodeURIComponent(run.id)}/artifacts?zip=1${bundle ? '&bundle=review' : ''}&token=${encodeURIComponent(link.token)}`;
          res.json({
            runId: run.id,
            artifacts: run.files.map((f) => f.path),
            files: run.files,
            download: { zipUrl, token: link.token, expiresAt: link.expiresAt },
          });
          return;
        }
        const entries: BuildEntry[] = [];
        let bytes = 0;
        for (const f of outputs) {
          const name = bundle ? `output/${f.name}` : f.name;
          entries.push({ name, file: join(dir, f.path), level: COMPRESSED.test(f.contentType) ? 0 : 6 });
          bytes += f.size;
        }
        if (bundle) {
          const expectedDir = join(dir, 'expected');
          for (const { name, size } of await listDir(expectedDir)) {
            entries.push({ name: `expected/${name}`, file: join(expectedDir, name), level: 6 });
            bytes += size;
          }
        }
        await sendArchive(res, deps.archives, {
          dir: deps.tmpDir,
          entries,
          bytes,
          mtime: Date.now(),
          limits: deps.settings.archiveLimits,
          filename: `${run.id}${bundle ? '-review' : ''}.zip`,
        });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/artifacts/{path}',
      operationId: 'getRunArtifact',
      summary: 'One artifact’s bytes (path as listed, e.g. output/report.md)',
      tag: 'runs',
      responses: {
        200: { description: 'artifact bytes', schema: S.Binary, contentType: 'application/octet-stream' },
      },
      async handle(req, res) {
        const run = ownRun(deps, req);
        const path = req.params['*'] ?? req.params['path'] ?? '';
        if (path === '') throw invalid('path', 'artifact path is empty');
        const file =
          run.files.find((f) => f.path === path) ??
          run.files.find((f) => f.role === 'output' && f.name === path);
        if (!file) throw notFound(`artifact ${JSON.stringify(path)} of run ${run.id}`, 'path');
        const data = await readFile(join(runs.runDir(run.id), file.path));
        res.header('content-type', file.contentType).send(data);
      },
    },
  ];
}
