// The AutomationStore contract: automation records with their alias and versions saved together,
// versions newest first, and shared secrets that every caller agrees on. Automations belong to
// the service, not to a tenant.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import type { AutomationStore } from '../../../src/automation/registry/store.js';
import type { AutomationRecord, VersionRecord } from '../../../src/automation/registry/service.js';

export function automation(
  id: string,
  slug: string,
  extra: Partial<AutomationRecord> = {},
): AutomationRecord {
  return {
    id,
    type: 'workflow',
    slug,
    name: `Automation ${slug}`,
    description: 'described',
    status: 'active',
    version: '1.10.0',
    tag: `workflows.${slug}@1.10.0`,
    commit: 'c'.repeat(40),
    versionId: `ver_${id}`,
    triggers: { api: true, manual: false, email: { enabled: false, aliases: [] }, cron: null },
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    outputSchema: null,
    model: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

const version = (automationId: string, v: string): VersionRecord => ({
  id: `ver_${automationId}_${v}`,
  automationId,
  version: v,
  sourceRef: `workflows.x@${v}`,
  commit: v.replace(/\./g, '').padEnd(40, '0'),
  createdAt: '2026-01-01T00:00:00.000Z',
});

export function automationStoreContract(
  label: string,
  make: () => Promise<{ store: AutomationStore; close(): Promise<void> }>,
): void {
  contractSuite(`AutomationStore contract: ${label}`, make, (s) => {
    it('saves a record with its alias and versions; versions read newest first', async () => {
      const a = automation('wf_1', 'one');
      const versions = ['1.2.0', '1.10.0', '1.9.3', '0.1.0'].map((v) => version('wf_1', v));
      await s().store.save(a, 'workflows.one', versions);
      assert.deepEqual(await s().store.get('wf_1'), a);
      assert.equal(await s().store.idOfAlias('workflows.one'), 'wf_1');
      assert.deepEqual(
        (await s().store.versions('wf_1')).map((v) => v.version),
        ['1.10.0', '1.9.3', '1.2.0', '0.1.0'],
      );
      assert.deepEqual((await s().store.versions('wf_1'))[0], version('wf_1', '1.10.0'));
    });

    it('unknown ids, aliases and versions are absent', async () => {
      assert.equal(await s().store.get('wf_none'), undefined);
      assert.equal(await s().store.idOfAlias('workflows.none'), undefined);
      assert.deepEqual(await s().store.versions('wf_none'), []);
    });

    it('save replaces the record and the whole version list, leaving other automations alone', async () => {
      await s().store.save(automation('wf_2', 'two'), 'workflows.two', [version('wf_2', '1.0.0')]);
      const changed = automation('wf_1', 'one', { name: 'Renamed', status: 'archived' });
      await s().store.save(changed, 'workflows.one', [version('wf_1', '2.0.0'), version('wf_1', '1.10.0')]);
      assert.deepEqual(await s().store.get('wf_1'), changed);
      assert.deepEqual(
        (await s().store.versions('wf_1')).map((v) => v.version),
        ['2.0.0', '1.10.0'],
      );
      assert.deepEqual(
        (await s().store.versions('wf_2')).map((v) => v.version),
        ['1.0.0'],
      );
      const ids = (await s().store.list()).map((x) => x.id).sort();
      assert.deepEqual(ids, ['wf_1', 'wf_2']);
    });

    it('a secret is made once; later and concurrent callers get the same bytes', async () => {
      let made = 0;
      const make = () => {
        made++;
        return Buffer.from(`secret-${made}-${'x'.repeat(24)}`);
      };
      const [a, b] = await Promise.all([s().store.secret('token', make), s().store.secret('token', make)]);
      assert.ok(Buffer.isBuffer(a));
      assert.deepEqual(a, b);
      assert.deepEqual(await s().store.secret('token', make), a);
      const other = await s().store.secret('other', () => Buffer.from('other secret'));
      assert.deepEqual(other, Buffer.from('other secret'));
    });
  });
}
