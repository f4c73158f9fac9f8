// Claims of the PostgreSQL run queue, each inside the caller's transaction: expired leases of
// other nodes (takeovers), the oldest queued runs, and the oldest queued runs that the
// concurrency limits allow (docs/automation.md, "The shared run queue").

import type { ClaimedState } from '../../runs/queue.js';
import type { RunDetail, RunRecord } from '../../runs/types.js';
import type { Queryable } from '../pool.js';
import {
  CLAIM_EXPIRED,
  CLAIM_IDS,
  CLAIM_READ_ASYNC,
  CLAIM_WINDOW,
  LOCK_KEYS,
  RUNNING_COUNTS,
} from './sql.js';

export interface ClaimedRun {
  runId: string;
  tenant: string;
  automationId: string;
  /** 1 for the first claim; each takeover adds one. */
  attempt: number;
  /** The run's lease had expired on another node (or an earlier process of this one). */
  takeover: boolean;
  previousNode: string | null;
  /** A cancel was asked for before this claim: stop it right away. */
  cancelRequested: boolean;
  /** What the claim read of the run with it (claims without limits). */
  stored?: ClaimedState;
}

export interface Claimer {
  nodeId: string;
  leaseSeconds: number;
  /** Running runs per tenant / per automation across every node; 0: no limit. */
  tenantLimit: number;
  automationLimit: number;
}

interface ClaimRow {
  id: string;
  tenant: string;
  automation_id: string;
  attempt: number;
  cancel_requested: boolean;
  previous_node?: string | null;
}

export function toClaimed(r: ClaimRow, takeover: boolean): ClaimedRun {
  return {
    runId: r.id,
    tenant: r.tenant,
    automationId: r.automation_id,
    attempt: r.attempt,
    takeover,
    previousNode: r.previous_node ?? null,
    cancelRequested: r.cancel_requested,
  };
}

/** A row of CLAIM_READ (and of completeAndClaimSql's claimed rows). */
export interface ClaimRowRead extends ClaimRow {
  takeover: boolean;
  record: RunRecord;
  detail: RunDetail | null;
  last_seq: number | null;
  last_at: string | null;
}

/**
 * Without limits: takeovers, then the oldest queued runs, up to `limit`, each with what the node
 * reads to run it, in one statement (`exclude`: runs this node owns).
 */
export async function claimAndRead(
  q: Queryable,
  c: Claimer,
  limit: number,
  exclude: string[],
): Promise<ClaimedRun[]> {
  const { rows } = await q.query<ClaimRowRead>(CLAIM_READ_ASYNC, [c.nodeId, c.leaseSeconds, limit, exclude]);
  return readClaims(rows);
}

/** Claimed runs as CLAIM_READ returns them, with what the node reads to run each. */
export function readClaims(rows: readonly ClaimRowRead[]): ClaimedRun[] {
  return rows.map((r) => ({
    ...toClaimed(r, r.takeover),
    stored: {
      record: r.record,
      detail: r.detail ?? undefined,
      lastSeq: r.last_seq ?? 0,
      lastEventMs: r.last_at ? Date.parse(r.last_at) : 0,
    },
  }));
}

/** Runs of other nodes whose lease expired, oldest lease first, taken over (`exclude`: owned). */
export async function claimExpired(
  tx: Queryable,
  c: Claimer,
  limit: number,
  exclude: string[],
): Promise<ClaimedRun[]> {
  const { rows } = await tx.query<ClaimRow>(CLAIM_EXPIRED, [c.nodeId, c.leaseSeconds, limit, exclude]);
  return rows.map((r) => toClaimed(r, true));
}

/**
 * With limits: lock a window of queued rows, then take an advisory transaction lock per tenant
 * and automation among them (in one global order, so two claimers never wait on each other in
 * a cycle), count what runs now, and claim what fits. A claimer that counts after another
 * waits for its lock, which it holds until commit, so it sees those claims: the count and the
 * claim are one atomic step across nodes. The window leaves out the queued runs of tenants and
 * automations already at their limit (read before the locks, so only a hint: the count decides),
 * so that runs over a limit at the head of the queue, however many, do not hide the runs
 * behind them. `more`: the window was full and not all of `room` was claimed, so a round with
 * a fresh hint may find more.
 */
export async function claimQueued(
  tx: Queryable,
  c: Claimer,
  room: number,
): Promise<{ claimed: ClaimedRun[]; more: boolean }> {
  const { tenantLimit, automationLimit } = c;
  const size = Math.max(room * 4, 64);
  const window = await tx.query<{ id: string; tenant: string; automation_id: string }>(CLAIM_WINDOW, [
    size,
    tenantLimit,
    automationLimit,
  ]);
  if (window.rows.length === 0) return { claimed: [], more: false };
  const tenants = [...new Set(window.rows.map((r) => r.tenant))];
  const automations = [...new Set(window.rows.map((r) => r.automation_id))];
  const keys = [
    ...(tenantLimit > 0 ? tenants.map((t) => `sluice:run-queue:tenant:${t}`) : []),
    ...(automationLimit > 0 ? automations.map((a) => `sluice:run-queue:automation:${a}`) : []),
  ].sort();
  await tx.query(LOCK_KEYS, [keys]);
  const running = await tx.query<{ kind: string; key: string; n: string }>(RUNNING_COUNTS, [
    tenantLimit > 0 ? tenants : [],
    automationLimit > 0 ? automations : [],
  ]);
  const count = new Map(running.rows.map((r) => [`${r.kind}:${r.key}`, Number(r.n)]));
  const pick: string[] = [];
  for (const r of window.rows) {
    if (pick.length >= room) break;
    const t = `t:${r.tenant}`;
    const a = `a:${r.automation_id}`;
    if (tenantLimit > 0 && (count.get(t) ?? 0) >= tenantLimit) continue;
    if (automationLimit > 0 && (count.get(a) ?? 0) >= automationLimit) continue;
    count.set(t, (count.get(t) ?? 0) + 1);
    count.set(a, (count.get(a) ?? 0) + 1);
    pick.push(r.id);
  }
  const more = window.rows.length === size && pick.length < room;
  if (pick.length === 0) return { claimed: [], more };
  const { rows } = await tx.query<ClaimRow>(CLAIM_IDS, [c.nodeId, c.leaseSeconds, pick]);
  return { claimed: rows.map((r) => toClaimed(r, false)), more };
}
