// Readings of /proc (Linux) about other processes: their children, and the CPU time they used.
// Tests and load tools use them for servers they started themselves (by pid).

import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** The process state letter of `pid` (proc(5): R, S, D, Z …); undefined once it is gone. */
export function processState(pid: number): string | undefined {
  return statFields(pid)?.[0];
}

/** Pids whose parent is `pid` (a postmaster's backends and auxiliary processes, say). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (Number(statFields(Number(entry))?.[1]) === pid) out.push(Number(entry));
  }
  return out;
}

/**
 * Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`): 100 on every Linux
 * architecture Node runs on (USER_HZ, proc(5)).
 */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, ms) used so far by `pid` itself; 0 once it is gone. */
export function cpuMs(pid: number): number {
  const f = statFields(pid);
  // utime and stime are fields 14 and 15 of proc(5), 12 and 13 after the name.
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND : 0;
}

/**
 * CPU time (ms) used so far by `pid` and its children, per pid, for `cpuSince`: a child that
 * ended between two readings is missing from the second, so its time is not counted at all.
 */
export function treeCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>([[pid, cpuMs(pid)]]);
  for (const child of childrenOf(pid)) out.set(child, cpuMs(child));
  return out;
}

/** CPU time (ms) the processes of `after` used since `before` (a process new in `after` from 0). */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}
