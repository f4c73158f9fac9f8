// The streams section: topics (with partitions, offsets, rates, produce, records, live records)
// and consumer groups (members, assignments, committed offsets, lag).

import type { Section } from '../section.js';
import { GroupsView, GroupView } from './groups.js';
import { TopicView } from './topic.js';
import { TopicsView } from './topics.js';

export const streamsSection: Section = {
  id: 'streams',
  title: 'Streams',
  routes: [
    { pattern: '/topics', title: 'Topics', nav: true, render: () => <TopicsView /> },
    { pattern: '/topics/:name', title: 'Topic', render: (m) => <TopicView name={m.params.name ?? ''} /> },
    { pattern: '/groups', title: 'Consumer groups', nav: true, render: () => <GroupsView /> },
    {
      pattern: '/groups/:group',
      title: 'Consumer group',
      render: (m) => <GroupView name={m.params.group ?? ''} />,
    },
  ],
};
