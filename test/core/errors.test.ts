import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ArchiveRefusal, refused } from '../../src/automation/archives/limits.js';
import { EvaluatorError } from '../../src/automation/evals/subject.js';
import { TooLargeError } from '../../src/automation/files/blob-store.js';
import { GitError } from '../../src/automation/registry/git.js';
import { ManifestError } from '../../src/automation/registry/manifest.js';
import { RefNotFoundError } from '../../src/automation/registry/repository.js';
import { CursorError } from '../../src/automation/runs/list.js';
import { ScopeError } from '../../src/core/auth/scopes.js';
import { CodedError, isCodedError } from '../../src/core/errors.js';
import { GrpcError, GrpcStatus } from '../../src/core/grpc/index.js';
import { HttpError } from '../../src/core/http/types.js';
import { SettingsError } from '../../src/core/settings/index.js';
import { UsageError } from '../../src/ratelimit/client.js';
import { ConfigError } from '../../src/ratelimit/config/errors.js';
import { JsonRequestError } from '../../src/ratelimit/server/json-codec.js';
import { ProfilerBusyError } from '../../src/ratelimit/server/profiler.js';
import { MappingError } from '../../src/ratelimit/stats/outputs/prom-mapping.js';
import { StoreUnavailableError } from '../../src/ratelimit/store/failure-policy.js';
import { MemcachedError } from '../../src/ratelimit/store/memcached-client.js';
import { RedisStoreError } from '../../src/ratelimit/store/redis-pool.js';
import { ErrorCodes, StreamsError, unprocessable } from '../../src/streams/errors.js';

describe('coded errors', () => {
  const cases: [Error, string, string, string][] = [
    [
      new SettingsError('PORT', 'x', 'a port'),
      'SettingsError',
      'invalid_setting',
      'invalid setting PORT="x": expected a port',
    ],
    [new ConfigError('a.yaml', 'bad'), 'ConfigError', 'invalid_config', 'a.yaml: bad'],
    [
      new GitError(['fetch'], 'fatal: no\n', 128),
      'GitError',
      'git_failed',
      'git fetch failed (128): fatal: no',
    ],
    [
      new ManifestError([{ field: 'slug', message: 'missing' }]),
      'ManifestError',
      'invalid_manifest',
      'invalid manifest: slug: missing',
    ],
    [new RefNotFoundError('v9'), 'RefNotFoundError', 'ref_not_found', 'version "v9" not found'],
    [new TooLargeError(10), 'TooLargeError', 'too_large', 'upload larger than 10 bytes'],
    [new StoreUnavailableError('down', 'redis'), 'StoreUnavailableError', 'store_unavailable', 'down'],
    [new RedisStoreError('r'), 'RedisStoreError', 'redis_failed', 'r'],
    [new MemcachedError('m'), 'MemcachedError', 'memcached_failed', 'm'],
    [new ScopeError('s'), 'ScopeError', 'invalid_scopes', 's'],
    [new CursorError('c'), 'CursorError', 'invalid_cursor', 'c'],
    [new ProfilerBusyError('p'), 'ProfilerBusyError', 'profiler_busy', 'p'],
    [new JsonRequestError('j'), 'JsonRequestError', 'invalid_request', 'j'],
    [new MappingError('m'), 'MappingError', 'invalid_mapping', 'm'],
    [new UsageError('u'), 'UsageError', 'invalid_usage', 'u'],
    [new EvaluatorError('e'), 'EvaluatorError', 'evaluator_failed', 'e'],
    [new HttpError(418, 'teapot', 't'), 'HttpError', 'teapot', 't'],
    [new ArchiveRefusal(refused([])), 'ArchiveRefusal', 'invalid_archive', 'invalid archive: unreadable'],
  ];
  for (const [err, name, code, message] of cases) {
    it(`${name} is a CodedError with code ${code}`, () => {
      assert.ok(err instanceof CodedError);
      assert.ok(isCodedError(err));
      assert.equal(err.name, name);
      assert.equal(err.code, code);
      assert.equal(err.message, message);
    });
  }

  it('GrpcError keeps the wire status and names it as its code', () => {
    const err = new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'bad');
    assert.equal(err.status, 3);
    assert.equal(err.code, 'invalid_argument');
    assert.equal(err.name, 'GrpcError');
  });

  it('StreamsError keeps the Confluent number and names it as its code', () => {
    const err = new StreamsError(404, ErrorCodes.topicNotFound, 'gone');
    assert.equal(err.errorCode, 40401);
    assert.equal(err.code, 'topic_not_found');
    assert.equal(unprocessable('x').code, 'unprocessable');
    assert.equal(new StreamsError(413, 413, 'big').code, 'too_large');
  });

  it('no class in src/ extends Error directly but CodedError itself', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && path !== join('src', 'core', 'errors.ts')) {
          if (/\bextends Error\b/.test(readFileSync(path, 'utf8'))) offenders.push(path);
        }
      }
    };
    walk('src');
    assert.deepEqual(offenders, []);
  });
});
