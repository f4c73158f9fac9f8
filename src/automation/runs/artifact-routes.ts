// Run artifacts (HTTP only): the list (RunArtifactsResponse), one artifact's bytes, and ZIPs of
// the outputs (or the review bundle with output/ and expected/). A ZIP may be fetched with a
// signed token instead of a key; the list hands one out in response headers, since the SDK's
// RunArtifactsResponse has no field for it. ZIPs are built by an archive worker and streamed.

import { hasScope } from '../../core/auth/types.js';
import { HttpError, type HttpRequest } from '../../core/http/index.js';
import { sendFile } from '../../core/http/download.js';
import { sendArchive } from '../archives/transfer.js';
import { ApiError, notFound } from '../errors.js';
import type { ApiDeps, ApiRoute } from '../http/api.js';
import { route } from '../http/route.js';
import { Binary } from '../wire/operations.js';
import { RunArtifactsResponse } from '../wire/runs.js';
import { ownRun } from './routes.js';
import { ArtifactsQuery } from './schemas.js';
import { artifactView } from './view.js';

/** Artifact bytes go out as octet-stream: the SDK's download accepts that (not e.g. text/markdown). */
const DOWNLOAD_TYPE = 'application/octet-stream';

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
    route({
      method: 'GET',
      path: '/runs/{id}/artifacts',
      operationId: 'runsArtifactsList',
      summary:
        'Artifacts of a run; zip=1 gives a ZIP of output files; bundle=review adds expected/; token opens the ZIP without a key',
      tag: 'runs',
      public: true,
      query: ArtifactsQuery,
      responses: {
        200: {
          description: 'artifact list (JSON) or ZIP bytes when zip=1',
          content: { 'application/json': RunArtifactsResponse, 'application/zip': Binary },
        },
      },
      async handle(ctx) {
        const q = ctx.query;
        const zip = q.zip === '1';
        const bundle = q.bundle ?? '';
        const id = ctx.params['id']!;
        let run;
        if (q.token !== undefined) {
          if (!zip)
            throw new ApiError(403, 'token_scope', 'a download token is valid only for the ZIP (zip=1)');
          run = await runs.get(id);
          const verdict = run ? tokens.verify(q.token, run.id, bundle) : 'invalid';
          if (!run || verdict !== 'ok')
            throw new ApiError(
              401,
              verdict === 'expired' ? 'token_expired' : 'invalid_token',
              verdict === 'expired'
                ? 'the download token has expired'
                : 'the download token is not valid for this download',
            );
        } else run = await ownRun(runs, id, requireKey(ctx.req));
        if (!zip) {
          const link = tokens.issue(run.id, bundle);
          ctx.res
            .header(
              'x-download-url',
              `/api/v1/runs/${encodeURIComponent(run.id)}/artifacts?zip=1${bundle ? '&bundle=review' : ''}&token=${encodeURIComponent(link.token)}`,
            )
            .header('x-download-expires-at', link.expiresAt);
          return { artifacts: run.files.map(artifactView) };
        }
        const { entries, bytes } = await runs.zipEntries(
          run,
          bundle === 'review' ? await deps.expectedFiles(run) : undefined,
        );
        await sendArchive(ctx.res, deps.archives, {
          dir: deps.tmpDir,
          entries,
          bytes,
          mtime: Date.now(),
          limits: deps.settings.archiveLimits,
          filename: `${run.id}${bundle ? '-review' : ''}.zip`,
        });
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/artifacts/{path}',
      operationId: 'runsArtifactsGet',
      summary: 'One artifact’s bytes (path as listed, e.g. output/report.md), as application/octet-stream',
      tag: 'runs',
      responses: {
        200: { description: 'artifact bytes', schema: Binary, contentType: DOWNLOAD_TYPE },
      },
      async handle(ctx) {
        const run = await ownRun(runs, ctx.params['id']!, ctx.tenant());
        const path = ctx.params['*'] ?? ctx.params['path'] ?? '';
        const found = await runs.artifact(run, path);
        if (!found) throw notFound(`artifact ${JSON.stringify(path)} of run ${run.id}`, 'path');
        await sendFile(ctx.res, found.absPath, {
          contentType: DOWNLOAD_TYPE,
          filename: found.file.path.split('/').pop()!,
        });
      },
    }),
  ];
}
