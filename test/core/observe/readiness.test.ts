// The readiness registry's own rules: a check that never answers counts as not ready after its
// time-out (the probe is not held), a thrown reason is reported, probes within the cache window
// share one round of checks, and draining makes the service not ready whatever the checks say.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ReadinessRegistry, stateCheck } from '../../../src/core/observe/index.js';

describe('ReadinessRegistry', () => {
  it('a check that never answers is not ready after its time-out; the others are still reported', async () => {
    const readiness = new ReadinessRegistry({ timeoutMs: 50, cacheMs: 0 });
    readiness.register('hangs', () => new Promise<void>(() => undefined));
    readiness.register('fine', () => undefined);
    const report = await readiness.evaluate();
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks.hangs, { ready: false, reason: 'no answer within 50 ms' });
    assert.deepEqual(report.checks.fine, { ready: true });
  });

  it('reports the reason a check throws or rejects with', async () => {
    const readiness = new ReadinessRegistry({ cacheMs: 0 });
    let up = false;
    readiness.register(
      'state',
      stateCheck(() => up, 'the thing is down'),
    );
    readiness.register('rejects', () => Promise.reject(new Error('refused')));
    const report = await readiness.evaluate();
    assert.deepEqual(report.checks.state, { ready: false, reason: 'the thing is down' });
    assert.deepEqual(report.checks.rejects, { ready: false, reason: 'refused' });
    up = true;
    assert.deepEqual((await readiness.evaluate()).checks.state, { ready: true });
  });

  it('probes inside the cache window share one round of checks', async () => {
    const readiness = new ReadinessRegistry({ cacheMs: 60_000 });
    let calls = 0;
    readiness.register('counted', () => {
      calls++;
    });
    await Promise.all([readiness.evaluate(), readiness.evaluate(), readiness.evaluate()]);
    await readiness.evaluate();
    assert.equal(calls, 1);
  });

  it('draining: not ready whatever the checks say', async () => {
    const readiness = new ReadinessRegistry();
    readiness.register('fine', () => undefined);
    assert.equal((await readiness.evaluate()).ready, true);
    readiness.beginDrain();
    const report = await readiness.evaluate();
    assert.equal(report.ready, false);
    assert.equal(report.draining, true);
  });

  it('refuses a second check of the same name', () => {
    const readiness = new ReadinessRegistry();
    readiness.register('once', () => undefined);
    assert.throws(() => readiness.register('once', () => undefined), /registered already/);
  });
});
