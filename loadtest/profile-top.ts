// The top of a V8 .cpuprofile as a self-time table: where the samples landed, grouped by
// function (name, file, line), with the share of all non-idle samples. Used by the load test
// runner's --cpu-prof and on its own:
// `npx tsx loadtest/profile-top.ts <file.cpuprofile> [rows] [only the last ms]`.

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  endTime: number;
  startTime: number;
}

export interface SelfTimeRow {
  frame: string;
  selfMs: number;
  /** Share of all samples except `(idle)`. */
  share: number;
}

export interface ProfileTop {
  /** Busy time (every sample but `(idle)`), ms. */
  busyMs: number;
  idleMs: number;
  rows: SelfTimeRow[];
}

function label(frame: CallFrame, root: string): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  let file = frame.url;
  if (file.startsWith('file://')) file = relative(root, fileURLToPath(file));
  else if (file.startsWith('/')) file = relative(root, file);
  return `${name} ${file}:${frame.lineNumber + 1}`;
}

/**
 * `lastMs`: count only the samples of the profile's last `lastMs` milliseconds (the load
 * window), so start-up (module loading, compiling) does not crowd the table.
 */
export function profileTop(path: string, limit = 15, root = process.cwd(), lastMs?: number): ProfileTop {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map<number, string>();
  for (const node of profile.nodes) byId.set(node.id, label(node.callFrame, root));
  const self = new Map<string, number>();
  const from = lastMs === undefined ? -Infinity : profile.endTime - lastMs * 1000;
  let t = profile.startTime;
  // timeDeltas[i] is the time before sample i; it is charged to the sample's frame.
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < from) continue;
    const frame = byId.get(profile.samples[i]!) ?? '(unknown)';
    self.set(frame, (self.get(frame) ?? 0) + delta);
  }
  const idleUs = self.get('(idle)') ?? 0;
  self.delete('(idle)');
  let busyUs = 0;
  for (const us of self.values()) busyUs += us;
  const rows = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([frame, us]) => ({ frame, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }));
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, rows };
}

export function renderProfileTop(top: ProfileTop): string {
  const lines = [
    `busy ${top.busyMs.toFixed(0)} ms, idle ${top.idleMs.toFixed(0)} ms`,
    '| self ms | self % | frame |',
    '|---:|---:|---|',
  ];
  for (const r of top.rows)
    lines.push(`| ${r.selfMs.toFixed(1)} | ${(r.share * 100).toFixed(1)} | \`${r.frame}\` |`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, n, last] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: tsx loadtest/profile-top.ts <file.cpuprofile> [rows] [last ms]\n');
    process.exit(2);
  }
  const top = profileTop(file, n ? Number(n) : 15, process.cwd(), last ? Number(last) : undefined);
  process.stdout.write(renderProfileTop(top) + '\n');
}
