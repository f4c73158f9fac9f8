// The SQL text of the PostgreSQL run queue (src/automation/pg/run-queue.ts): the channels it
// notifies on and every statement, in one place. The record columns are written as the run store
// writes them (stores/run-columns.ts).

import { COLUMN_NAMES, SET_COLUMNS } from '../stores/run-columns.js';

export const WAKE = 'sluice_run_wake';
export const CANCEL = 'sluice_run_cancel';
export const DONE = 'sluice_run_done';

const n = COLUMN_NAMES.length;

/** $1 run id. */
export const ENQUEUE = `WITH queued AS (
    UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp(), node = NULL,
      lease_expires_at = NULL
    WHERE id = $1 AND (queue_state IS NULL OR queue_state = 'queued')
    RETURNING id)
  SELECT pg_notify('${WAKE}', '') FROM queued`;

/** $1 bound. */
export const QUEUED_COUNT = `SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE queue_state = 'queued' LIMIT $1) AS waiting`;

export const REQUEUE_STRANDED = `WITH stranded AS (
    UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp()
    WHERE queue_state IS NULL AND status IN ('created', 'pending') AND NOT cancel_requested
    RETURNING id)
  SELECT count(*) AS n, pg_notify('${WAKE}', '') FROM stranded HAVING count(*) > 0`;

// A new run's row (queued), detail and first events in one statement: one commit, whose wake
// goes out when it commits.
export const CREATE_QUEUED = `WITH r AS (
    INSERT INTO runs (${COLUMN_NAMES.join(', ')}, queue_state, queued_at)
    VALUES (${COLUMN_NAMES.map((_, i) => `$${i + 1}`).join(', ')}, 'queued', clock_timestamp())
    RETURNING id),
  d AS (INSERT INTO run_details (run_id, detail) SELECT id, $${n + 1}::json FROM r),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT r.id, x.s, x.e FROM r, unnest($${n + 2}::integer[], $${n + 3}::json[]) AS x (s, e)),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || r.id, x.sha FROM r, unnest($${n + 4}::text[]) AS x (sha)
    ON CONFLICT DO NOTHING)
  SELECT pg_notify('${WAKE}', '') FROM r`;

/**
 * The end of a run: its record, queue state done, detail and last events, written only if the
 * row still names this node and attempt (claimed), in one statement (one commit); the done
 * notification goes out when it commits. `wake` adds a wake (concurrency limits: a slot freed).
 */
export const completeWithSql = (wake: boolean) => `WITH done AS (
    UPDATE runs SET ${SET_COLUMNS}, queue_state = 'done', lease_expires_at = NULL
    WHERE id = $1 AND node = $${n + 1} AND attempt = $${n + 2} AND queue_state = 'claimed'
    RETURNING id),
  d AS (
    INSERT INTO run_details (run_id, detail) SELECT id, $${n + 3}::json FROM done
    ON CONFLICT (run_id) DO UPDATE SET detail = excluded.detail),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT done.id, x.s, x.e FROM done, unnest($${n + 4}::integer[], $${n + 5}::json[]) AS x (s, e)
    ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || done.id, x.sha FROM done, unnest($${n + 7}::text[]) AS x (sha)
    ON CONFLICT DO NOTHING)
  SELECT pg_notify('${DONE}', $${n + 6})${wake ? `, pg_notify('${WAKE}', '')` : ''} FROM done`;

/** Was the run completed by this node and attempt already ($1 id, $2 node, $3 attempt)? */
export const DONE_BY = `SELECT 1 FROM runs WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'done'`;

/** $1 id, $2 node, $3 attempt, $4 done payload. */
export const completeSql = (wake: boolean) => `WITH done AS (
    UPDATE runs SET queue_state = 'done', lease_expires_at = NULL
    WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'claimed'
    RETURNING id)
  SELECT pg_notify('${DONE}', $4)${wake ? `, pg_notify('${WAKE}', '')` : ''} FROM done`;

/** $1 id, $2 node, $3 attempt. */
export const RELEASE = `WITH back AS (
    UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp(), node = NULL,
      lease_expires_at = NULL
    WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'claimed'
    RETURNING id)
  SELECT pg_notify('${WAKE}', '') FROM back`;

/** $1 ids, $2 node, $3 lease seconds. */
export const RENEW = `UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => $3)
  WHERE id = ANY($1::text[]) AND node = $2 AND queue_state = 'claimed'
  RETURNING id, attempt, cancel_requested`;

/** $1 ids this node owns. */
export const ANY_EXPIRED = `SELECT EXISTS (SELECT 1 FROM runs WHERE queue_state = 'claimed'
    AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($1::text[]))) AS expired`;

/** $1 ids. */
export const DONE_AMONG = "SELECT id, status FROM runs WHERE id = ANY($1::text[]) AND queue_state = 'done'";

export const CANCEL_LOCK = 'SELECT queue_state, node FROM runs WHERE id = $1 FOR UPDATE';
export const CANCEL_DEQUEUE = `UPDATE runs SET queue_state = 'done', cancel_requested = true WHERE id = $1`;
export const CANCEL_FLAG = 'UPDATE runs SET cancel_requested = true WHERE id = $1';
export const NOTIFY = 'SELECT pg_notify($1, $2)';

/** Expired leases of other nodes: $1 node, $2 lease seconds, $3 limit, $4 ids this node owns. */
export const CLAIM_EXPIRED = `WITH expired AS (
    SELECT id, node FROM runs
    WHERE queue_state = 'claimed' AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($4::text[]))
    ORDER BY lease_expires_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
  UPDATE runs r SET node = $1, lease_expires_at = clock_timestamp() + make_interval(secs => $2),
    attempt = r.attempt + 1
  FROM expired e WHERE r.id = e.id
  RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested, e.node AS previous_node`;

/** The oldest queued rows: $1 node, $2 lease seconds, $3 limit. */
export const CLAIM_ANY = `WITH next AS (
    SELECT id FROM runs WHERE queue_state = 'queued'
    ORDER BY queued_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
  UPDATE runs r SET queue_state = 'claimed', node = $1,
    lease_expires_at = clock_timestamp() + make_interval(secs => $2), attempt = r.attempt + 1
  FROM next WHERE r.id = next.id
  RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested`;

/** A window of queued rows, leaving out full tenants and automations: $1 size, $2/$3 limits. */
export const CLAIM_WINDOW = `WITH full_tenants AS (
    SELECT tenant FROM runs WHERE $2::int > 0 AND queue_state = 'claimed'
    GROUP BY tenant HAVING count(*) >= $2::int),
  full_automations AS (
    SELECT automation_id FROM runs WHERE $3::int > 0 AND queue_state = 'claimed'
    GROUP BY automation_id HAVING count(*) >= $3::int)
  SELECT id, tenant, automation_id FROM runs
  WHERE queue_state = 'queued'
    AND tenant NOT IN (SELECT tenant FROM full_tenants)
    AND automation_id NOT IN (SELECT automation_id FROM full_automations)
  ORDER BY queued_at, id
  LIMIT $1
  FOR UPDATE OF runs SKIP LOCKED`;

/** Advisory transaction locks on $1 keys, taken in sorted order. */
export const LOCK_KEYS = `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
  FROM (SELECT k FROM unnest($1::text[]) AS k ORDER BY k) AS sorted`;

/** Claimed rows per tenant in $1 and per automation in $2. */
export const RUNNING_COUNTS = `SELECT 't' AS kind, tenant AS key, count(*) AS n FROM runs
    WHERE queue_state = 'claimed' AND tenant = ANY($1::text[]) GROUP BY tenant
  UNION ALL
  SELECT 'a', automation_id, count(*) FROM runs
    WHERE queue_state = 'claimed' AND automation_id = ANY($2::text[]) GROUP BY automation_id`;

/** $1 node, $2 lease seconds, $3 ids. */
export const CLAIM_IDS = `UPDATE runs SET queue_state = 'claimed', node = $1,
    lease_expires_at = clock_timestamp() + make_interval(secs => $2), attempt = attempt + 1
  WHERE id = ANY($3::text[])
  RETURNING id, tenant, automation_id, attempt, cancel_requested`;
