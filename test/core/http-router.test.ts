// The router's answers for fixed paths (looked up directly) must equal the trie walk's: the
// same route, 405 with the same Allow list, HEAD served by GET, params where the walk binds them.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Router } from '../../src/core/http/router.js';

const noop = (): void => undefined;

describe('core http router', () => {
  it('fixed paths, params, tails, 405 and HEAD resolve as the trie defines', () => {
    const router = new Router()
      .get('/topics/topic', noop)
      .post('/topics/topic', noop)
      .get('/topics/:name', noop)
      .put('/topics/:name/config', noop)
      .get('/files/*', noop)
      .post('/json', noop);
    const found = (method: string, path: string) => {
      const m = router.match(method, path);
      return m.kind === 'found' ? [m.route.method, m.route.pattern, m.params] : m;
    };
    assert.deepEqual(found('GET', '/topics/topic'), ['GET', '/topics/topic', {}]);
    assert.deepEqual(found('POST', '/topics/topic'), ['POST', '/topics/topic', {}]);
    assert.deepEqual(found('HEAD', '/topics/topic'), ['GET', '/topics/topic', {}]);
    assert.deepEqual(found('DELETE', '/topics/topic'), {
      kind: 'method-not-allowed',
      allow: ['GET', 'HEAD', 'POST'],
    });
    assert.deepEqual(found('GET', '/topics/other'), ['GET', '/topics/:name', { name: 'other' }]);
    assert.deepEqual(found('PUT', '/topics/a%20b/config'), ['PUT', '/topics/:name/config', { name: 'a b' }]);
    assert.deepEqual(found('GET', '/files/a/b'), ['GET', '/files/*', { '*': 'a/b' }]);
    assert.deepEqual(found('POST', '/json'), ['POST', '/json', {}]);
    assert.deepEqual(found('POST', '/json/'), ['POST', '/json', {}]);
    assert.deepEqual(found('GET', '/json'), { kind: 'method-not-allowed', allow: ['POST'] });
    assert.deepEqual(found('GET', '/nope'), { kind: 'not-found' });
  });
});
