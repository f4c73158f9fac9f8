import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { EnvReader, SettingsError } from '../../src/core/settings/index.js';
import { loadStreamsSettings } from '../../src/streams/settings.js';

test('node settings: a random node id by default, heartbeat 1s, timeout 10s; bad values name the variable', () => {
  const a = loadStreamsSettings(new EnvReader({}));
  const b = loadStreamsSettings(new EnvReader({}));
  assert.match(a.nodeId, /^[A-Za-z0-9_-]{1,64}$/);
  assert.notEqual(a.nodeId, b.nodeId, 'each start picks its own id');
  assert.equal(a.nodeHeartbeatMs, 1_000);
  assert.equal(a.nodeTimeoutMs, 10_000);
  const set = loadStreamsSettings(
    new EnvReader({ STREAMS_NODE_ID: 'east-1', STREAMS_NODE_HEARTBEAT: '200ms', STREAMS_NODE_TIMEOUT: '2s' }),
  );
  assert.deepEqual([set.nodeId, set.nodeHeartbeatMs, set.nodeTimeoutMs], ['east-1', 200, 2_000]);
  const bad: Array<[Record<string, string>, string]> = [
    [{ STREAMS_NODE_ID: 'a.b' }, 'STREAMS_NODE_ID'],
    [{ STREAMS_NODE_ID: 'x'.repeat(65) }, 'STREAMS_NODE_ID'],
    [{ STREAMS_NODE_HEARTBEAT: 'often' }, 'STREAMS_NODE_HEARTBEAT'],
    [{ STREAMS_NODE_HEARTBEAT: '0ms' }, 'STREAMS_NODE_HEARTBEAT'],
    [{ STREAMS_NODE_HEARTBEAT: '5s', STREAMS_NODE_TIMEOUT: '5s' }, 'STREAMS_NODE_TIMEOUT'],
  ];
  for (const [env, name] of bad) {
    assert.throws(
      () => loadStreamsSettings(new EnvReader(env)),
      (e: unknown) => e instanceof SettingsError && e.message.includes(name),
      name,
    );
  }
});
