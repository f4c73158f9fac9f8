// The console's shared page logic that needs no browser: the one time format (full, clock,
// relative, durations, protobuf durations) and which sections a key's scopes open.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ALL_VIEWS_SCOPES, sectionAllowed } from '../../console/src/shell/scopes.js';
import {
  fmtClock,
  fmtDuration,
  fmtFull,
  fmtProtoDuration,
  fmtRelative,
} from '../../console/src/ui/time-format.js';

describe('console time format', () => {
  const at = '2026-11-27T00:20:21.123Z';
  it('gives the full timestamp with milliseconds and the clock of events', () => {
    assert.equal(fmtFull(at), '2026-11-27 00:20:21.123 UTC');
    assert.equal(fmtFull(Date.parse(at)), '2026-11-27 00:20:21.123 UTC');
    assert.equal(fmtClock(at), '00:20:21.123');
    assert.equal(fmtFull(null), '—');
    assert.equal(fmtFull('not a time'), 'not a time');
  });

  it('says how long ago or how soon, in the largest whole unit', () => {
    const now = Date.parse(at);
    assert.equal(fmtRelative(now - 2000, now), 'just now');
    assert.equal(fmtRelative(now - 42_000, now), '42 s ago');
    assert.equal(fmtRelative(now - 3 * 60_000 - 5000, now), '3 min ago');
    assert.equal(fmtRelative(now + 2 * 3_600_000, now), 'in 2 h');
    assert.equal(fmtRelative(now - 5 * 86_400_000, now), '5 d ago');
  });

  it('writes durations in human units', () => {
    assert.equal(fmtDuration(850), '850 ms');
    assert.equal(fmtDuration(2400), '2.4 s');
    assert.equal(fmtDuration(12_000), '12 s');
    assert.equal(fmtDuration(192_000), '3 min 12 s');
    assert.equal(fmtDuration(3_600_000), '1 h');
    assert.equal(fmtDuration(21 * 86_400_000 + 3 * 3_600_000 + 60_000), '21 d 3 h');
    assert.equal(fmtDuration(null), '—');
    assert.equal(fmtProtoDuration('1813113s'), '20 d 23 h');
    assert.equal(fmtProtoDuration('0.5s'), '500 ms');
    assert.equal(fmtProtoDuration('soon'), 'soon');
  });
});

describe('console sections by scope', () => {
  it('opens a section with its read scope, its service scope or admin', () => {
    assert.ok(sectionAllowed('streams', ['streams:read']));
    assert.ok(sectionAllowed('streams', ['streams']));
    assert.ok(sectionAllowed('ratelimit', ['admin']));
    assert.ok(sectionAllowed('automation', undefined), 'no key needed: every section');
    assert.ok(!sectionAllowed('ratelimit', ['streams', 'automation']));
    assert.ok(!sectionAllowed('automation', ['automation:write']), 'the views read');
    const hinted = ALL_VIEWS_SCOPES.split(',');
    for (const id of ['automation', 'streams', 'ratelimit'] as const) assert.ok(sectionAllowed(id, hinted));
  });
});
