// Key layout of the group-state bucket (JetStream key-value). Keys are dot-separated tokens of
// `A-Z a-z 0-9 - _ / =`, so names are escaped: every character outside `A-Z a-z 0-9 _ -` (the
// dot of `orders.v2` above all, which would split a token) becomes `=XX` per UTF-8 byte.
//
//   n.<node>                           heartbeat of a node: {node, url, at}
//   m.<group>.<instance>               member: group, id, node, seq, topics, config, base_uri…
//   p.<group>.<instance>               the instance's positions {"topic/partition": next offset}
//   o.<group>.<topic>.<partition>      committed offset (next to read), decimal text
//   c.<group>.<topic>.<partition>      holder of the partition: an instance id

export type ParsedKey =
  | { readonly kind: 'node'; readonly node: string }
  | { readonly kind: 'member' | 'positions'; readonly group: string; readonly id: string }
  | {
      readonly kind: 'offset' | 'claim';
      readonly group: string;
      readonly topic: string;
      readonly partition: number;
    };

export function escapeToken(name: string): string {
  let out = '';
  for (const ch of name) {
    if (/[A-Za-z0-9_-]/.test(ch)) out += ch;
    else
      for (const byte of Buffer.from(ch, 'utf8'))
        out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function unescapeToken(token: string): string {
  if (!token.includes('=')) return token;
  const bytes: number[] = [];
  for (let i = 0; i < token.length;) {
    if (token[i] === '=') {
      bytes.push(parseInt(token.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      bytes.push(token.charCodeAt(i));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

export const nodeKey = (node: string): string => `n.${escapeToken(node)}`;
export const memberKey = (group: string, id: string): string => `m.${escapeToken(group)}.${escapeToken(id)}`;
export const positionsKey = (group: string, id: string): string =>
  `p.${escapeToken(group)}.${escapeToken(id)}`;
export const offsetKey = (group: string, topic: string, partition: number): string =>
  `o.${escapeToken(group)}.${escapeToken(topic)}.${partition}`;
export const claimKey = (group: string, topic: string, partition: number): string =>
  `c.${escapeToken(group)}.${escapeToken(topic)}.${partition}`;

export function parseKey(key: string): ParsedKey | undefined {
  const t = key.split('.');
  switch (t[0]) {
    case 'n':
      return t.length === 2 ? { kind: 'node', node: unescapeToken(t[1]!) } : undefined;
    case 'm':
    case 'p':
      return t.length === 3
        ? {
            kind: t[0] === 'm' ? 'member' : 'positions',
            group: unescapeToken(t[1]!),
            id: unescapeToken(t[2]!),
          }
        : undefined;
    case 'o':
    case 'c': {
      if (t.length !== 4 || !/^\d{1,9}$/.test(t[3]!)) return undefined;
      return {
        kind: t[0] === 'o' ? 'offset' : 'claim',
        group: unescapeToken(t[1]!),
        topic: unescapeToken(t[2]!),
        partition: Number(t[3]),
      };
    }
    default:
      return undefined;
  }
}
