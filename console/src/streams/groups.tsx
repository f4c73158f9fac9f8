// Consumer groups: the list, and one group's members, assignments, committed offsets and lag
// per partition, refreshed every two seconds.

import { href } from '../shell/router.js';
import { ErrorBox } from '../ui/error-box.js';
import { useLoad } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import { describeGroup, listGroups, type GroupDetail, type GroupSummary } from './api.js';
import { GroupAdmin } from './group-admin.js';

export function GroupsView() {
  const groups = useLoad((signal) => listGroups(signal), [], 3_000);
  return (
    <section aria-labelledby="st-groups">
      <h1 id="st-groups">Consumer groups</h1>
      <p class="muted">Groups with a member, and stopped groups (no members) that keep committed offsets.</p>
      {groups.error ? <ErrorBox error={groups.error} context="Loading groups" service="streams" /> : null}
      <Table<GroupSummary>
        caption="Consumer groups"
        rowKey={(g) => g.group}
        rows={groups.data?.consumer_groups ?? []}
        pageSize={50}
        empty={
          groups.data ? (
            <>
              No consumer groups. A group appears when a consumer joins it:{' '}
              <code>POST /streams/consumers/&lt;group&gt;</code> (docs/streams.md).
            </>
          ) : (
            'Loading…'
          )
        }
        columns={[
          {
            key: 'group',
            label: 'Group',
            render: (g) => <a href={href('streams', `/groups/${encodeURIComponent(g.group)}`)}>{g.group}</a>,
          },
          { key: 'members', label: 'Members', numeric: true },
          { key: 'topics', label: 'Topics', render: (g) => g.topics.join(', ') },
          {
            key: 'lag',
            label: 'Lag',
            numeric: true,
            render: (g) => (g.lag === null ? <span class="muted">no commit yet</span> : String(g.lag)),
          },
        ]}
      />
    </section>
  );
}

type PartitionRow = GroupDetail['partitions'][number];
type MemberRow = GroupDetail['members'][number];

export function GroupView({ name }: { name: string }) {
  const group = useLoad((signal) => describeGroup(name, signal), [name], 2_000);
  const totalLag = (group.data?.partitions ?? []).reduce((n, p) => n + (p.lag ?? 0), 0);
  return (
    <section aria-labelledby="st-group">
      <h1 id="st-group">
        Consumer group <code>{name}</code>
      </h1>
      {group.error ? <ErrorBox error={group.error} context="Loading the group" service="streams" /> : null}
      {group.data ? (
        <p>
          Total lag: <strong data-testid="total-lag">{totalLag}</strong>
        </p>
      ) : null}
      <Table<MemberRow>
        caption="Members"
        rowKey={(m) => m.instance_id}
        rows={group.data?.members ?? []}
        empty={group.data ? 'No members: the group is stopped (its committed offsets are kept).' : 'Loading…'}
        columns={[
          { key: 'instance_id', label: 'Instance', render: (m) => <code>{m.instance_id}</code> },
          { key: 'subscription', label: 'Subscription', render: (m) => m.subscription.join(', ') },
          {
            key: 'assignments',
            label: 'Assigned partitions',
            render: (m) => m.assignments.map((a) => `${a.topic}/${a.partition}`).join(', ') || '—',
          },
          { key: 'node', label: 'Node' },
          { key: 'last_seen', label: 'Last seen' },
        ]}
      />
      <Table<PartitionRow>
        caption="Partitions"
        rowKey={(p) => `${p.topic}/${p.partition}`}
        rows={group.data?.partitions ?? []}
        empty={group.data ? 'No partitions.' : 'Loading…'}
        columns={[
          { key: 'topic', label: 'Topic' },
          { key: 'partition', label: 'Partition', numeric: true },
          { key: 'owner', label: 'Owner', render: (p) => (p.owner ? <code>{p.owner}</code> : '—') },
          { key: 'committed_offset', label: 'Committed', numeric: true },
          { key: 'end_offset', label: 'End offset', numeric: true },
          { key: 'lag', label: 'Lag', numeric: true },
        ]}
      />
      {group.data ? (
        <GroupAdmin group={name} members={group.data.members.length} onChanged={group.reload} />
      ) : null}
    </section>
  );
}
