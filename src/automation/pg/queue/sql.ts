// The SQL text of the PostgreSQL run queue (src/automation/pg/run-queue.ts): the channels it
// notifies on and every statement, in one place. The record columns are written as the run store
// writes them (stores/run-columns.ts).

import { QUEUED_STATUSES } from '../../runs/statuses.js';
import { COLUMN_NAMES, COLUMN_TYPES, statusLiterals } from '../stores/run-columns.js';

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
    WHERE queue_state IS NULL AND status IN (${statusLiterals(QUEUED_STATUSES)}) AND NOT cancel_requested
    RETURNING id)
  SELECT count(*) AS n, pg_notify('${WAKE}', '') FROM stranded HAVING count(*) > 0`;

/** `unnest` of the record columns as arrays ($1 … $n), named as the columns. */
const RECORDS = `unnest(${COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;

/**
 * New runs, their details, first events and blob holds, many in one statement (one commit): $1 …
 * $n the record columns as arrays, $n+1 details (one per run, same order), $n+2 … $n+4 events
 * (run id, seq, event), $n+5/$n+6 holds (run id, sha256), $n+7 whether each run is claimed by
 * the node $n+8 under a lease of $n+9 seconds as it is stored (attempt 1), else queued; $n+10
 * whether each run is bounded: a bounded run is stored only if the runs queued before the
 * statement plus the bounded runs ahead of it in the batch, itself included, are at most $n+11
 * (CreateOptions.maxQueued; the count stops at that bound, so a long queue costs no more than that
 * many entries of the runs_queued index). Returns the ids stored. One wake when it commits, if
 * any run was queued. `asyncCommit`: the commit does not wait for its WAL flush (runs answered at
 * their end only, whose synchronous commit flushes this one with it).
 */
export const createQueuedBatchSql = (asyncCommit: boolean) => `WITH r AS (
    INSERT INTO runs (${COLUMN_NAMES.join(', ')}, queue_state, queued_at, node, lease_expires_at, attempt)
    SELECT ${COLUMN_NAMES.map((c) => `x.${c}`).join(', ')},
      CASE WHEN x.claimed THEN 'claimed' ELSE 'queued' END, clock_timestamp(),
      CASE WHEN x.claimed THEN $${n + 8}::text END,
      CASE WHEN x.claimed THEN clock_timestamp() + make_interval(secs => $${n + 9}::float8) END,
      CASE WHEN x.claimed THEN 1 ELSE 0 END
    FROM (
      SELECT x.*, c.claimed, b.bounded,
        count(*) FILTER (WHERE b.bounded) OVER (ORDER BY x.i) AS bounded_rank
      FROM ${RECORDS} WITH ORDINALITY AS x (${COLUMN_NAMES.join(', ')}, i)
      JOIN unnest($${n + 7}::boolean[]) WITH ORDINALITY AS c (claimed, i) USING (i)
      JOIN unnest($${n + 10}::boolean[]) WITH ORDINALITY AS b (bounded, i) USING (i)) AS x
    CROSS JOIN (
      SELECT count(*) AS n FROM (
        SELECT 1 FROM runs WHERE queue_state = 'queued' AND $${n + 11}::integer IS NOT NULL
        LIMIT $${n + 11}::integer) AS waiting) AS queued_now${
          asyncCommit
            ? "\n    CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit"
            : ''
        }
    WHERE NOT x.bounded OR $${n + 11}::integer IS NULL OR queued_now.n + x.bounded_rank <= $${n + 11}::integer
    RETURNING id, queue_state),
  d AS (
    INSERT INTO run_details (run_id, detail)
    SELECT x.id, x.detail FROM unnest($1::text[], $${n + 1}::json[]) AS x (id, detail) JOIN r USING (id)),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT x.id, x.s, x.e FROM unnest($${n + 2}::text[], $${n + 3}::integer[], $${n + 4}::json[]) AS x (id, s, e)
      JOIN r USING (id)),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || x.id, x.sha FROM unnest($${n + 5}::text[], $${n + 6}::text[]) AS x (id, sha) JOIN r USING (id)
    ON CONFLICT DO NOTHING),
  woke AS (
    SELECT pg_notify('${WAKE}', '') FROM (SELECT 1 FROM r WHERE queue_state = 'queued' LIMIT 1) AS any_queued)
  SELECT id, (SELECT count(*) FROM woke) AS woke FROM r`;

/**
 * The ends of runs this node owns, many in one statement (one commit): $1 … $n the final records'
 * columns as arrays, $n+1 node, $n+2 attempts, $n+3 details, $n+4 done payloads (one each, same
 * order), $n+5 … $n+7 last events (run id, seq, event), $n+8/$n+9 holds (run id, sha256),
 * $n+10 … $n+12 output content to store (run id, sha256, bytes; one chunk each, of $n+13 bytes at
 * most: PgBlobStore's small write, stored content kept). A run is written only if its row still
 * names this node and its attempt (the lease check, atomic with the write); its detail, events,
 * holds and output content only with it. The rows are locked in id order,
 * as the lease renewal locks them, so the two never wait on each other in a cycle. Returns the
 * ids written; each one's done notification goes out when the statement commits, and `wake`
 * adds a wake (concurrency limits: slots freed).
 */
export const completeBatchSql = (wake: boolean) => `WITH x AS (
    SELECT * FROM unnest(${COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')},
      $${n + 2}::integer[], $${n + 3}::json[], $${n + 4}::text[])
      AS x (${COLUMN_NAMES.join(', ')}, attempt, detail, payload)),
  mine AS (
    SELECT r.id FROM runs r JOIN x USING (id)
    WHERE r.node = $${n + 1} AND r.attempt = x.attempt AND r.queue_state = 'claimed'
    ORDER BY r.id
    FOR UPDATE OF r),
  done AS (
    UPDATE runs r SET ${COLUMN_NAMES.slice(1)
      .map((c) => `${c} = x.${c}`)
      .join(', ')}, queue_state = 'done', lease_expires_at = NULL
    FROM x JOIN mine USING (id)
    WHERE r.id = x.id AND r.node = $${n + 1} AND r.attempt = x.attempt AND r.queue_state = 'claimed'
    RETURNING r.id, x.detail, x.payload),
  d AS (
    INSERT INTO run_details (run_id, detail) SELECT id, detail FROM done
    ON CONFLICT (run_id) DO UPDATE SET detail = excluded.detail),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT ev.id, ev.s, ev.e FROM unnest($${n + 5}::text[], $${n + 6}::integer[], $${n + 7}::json[]) AS ev (id, s, e)
      JOIN done USING (id)
    ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || b.id, b.sha FROM unnest($${n + 8}::text[], $${n + 9}::text[]) AS b (id, sha) JOIN done USING (id)
    ON CONFLICT DO NOTHING),
  content AS (
    SELECT c.sha, c.data FROM unnest($${n + 10}::text[], $${n + 11}::text[], $${n + 12}::bytea[]) AS c (id, sha, data)
      JOIN done USING (id)),
  blob AS (
    INSERT INTO blobs (chunk_size, state, sha256, size)
    SELECT $${n + 13}::integer, 'ready', sha, length(data) FROM content
    ON CONFLICT (sha256) DO NOTHING
    RETURNING id, sha256),
  chunk AS (
    INSERT INTO blob_chunks (blob_id, seq, data)
    SELECT blob.id, 0, content.data FROM blob JOIN content ON content.sha = blob.sha256 WHERE length(content.data) > 0)
  SELECT id, pg_notify('${DONE}', payload)${wake ? `, pg_notify('${WAKE}', '')` : ''} FROM done`;

/** Which of $1 ids were completed by this node ($2) under their attempts ($3) already. */
export const DONE_BY_MANY = `SELECT r.id FROM runs r
  JOIN unnest($1::text[], $3::integer[]) AS x (id, attempt) ON r.id = x.id AND r.attempt = x.attempt
  WHERE r.node = $2 AND r.queue_state = 'done'`;

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

/**
 * $1 ids, $2 node, $3 lease seconds. The rows are locked in id order, as the batched end of runs
 * locks them (completeBatchSql), so the two never wait on each other in a cycle.
 */
export const RENEW = `WITH mine AS (
    SELECT id FROM runs WHERE id = ANY($1::text[]) AND node = $2 AND queue_state = 'claimed'
    ORDER BY id
    FOR UPDATE)
  UPDATE runs r SET lease_expires_at = clock_timestamp() + make_interval(secs => $3)
  FROM mine WHERE r.id = mine.id
  RETURNING r.id, r.attempt, r.cancel_requested`;

/** $1 ids this node owns. */
export const ANY_EXPIRED = `SELECT EXISTS (SELECT 1 FROM runs WHERE queue_state = 'claimed'
    AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($1::text[]))) AS expired`;

/**
 * A run's row locked (key share) by a transaction that commits waiting for its WAL flush: the lock
 * writes WAL, so the commit flushes every earlier commit with it ($1 id; no row: not stored).
 */
export const FLUSH_RUN = 'SELECT id FROM runs WHERE id = $1 FOR KEY SHARE';

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

/**
 * Without concurrency limits, a whole claim in one statement (one commit): expired leases of
 * other nodes first (takeovers), then the oldest queued rows, up to $3 in all ($1 node, $2 lease
 * seconds, $4 ids this node owns). With each run it returns what the claiming node reads to run
 * it — its record, detail, and last event's seq and time — so it needs no second round trip.
 * `runs.id` is `COLLATE "C"` and the run_id columns of run_details and run_events are not: a
 * comparison of the two has no collation an index of those tables can serve, so the planner
 * scanned both tables whole in each claim. The run's id is compared in the database's default
 * collation, as those keys are indexed (docs/benchmarks.md, "The claim's plan").
 */
export const CLAIM_READ = `WITH expired AS (
    SELECT id, node FROM runs
    WHERE queue_state = 'claimed' AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($4::text[]))
    ORDER BY lease_expires_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED),
  taken AS (
    UPDATE runs r SET node = $1, lease_expires_at = clock_timestamp() + make_interval(secs => $2),
      attempt = r.attempt + 1
    FROM expired e WHERE r.id = e.id
    RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested, e.node AS previous_node,
      true AS takeover, r.record),
  next AS (
    SELECT id FROM runs WHERE queue_state = 'queued' AND NOT (id = ANY($4::text[]))
    ORDER BY queued_at, id
    LIMIT greatest($3 - (SELECT count(*) FROM expired), 0)
    FOR UPDATE SKIP LOCKED),
  fresh AS (
    UPDATE runs r SET queue_state = 'claimed', node = $1,
      lease_expires_at = clock_timestamp() + make_interval(secs => $2), attempt = r.attempt + 1
    FROM next WHERE r.id = next.id
    RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested, NULL::text AS previous_node,
      false AS takeover, r.record),
  claimed AS (SELECT * FROM taken UNION ALL SELECT * FROM fresh)
  SELECT c.*, d.detail, ev.seq AS last_seq, ev.at AS last_at FROM claimed c
  LEFT JOIN run_details d ON d.run_id = c.id COLLATE "default"
  LEFT JOIN LATERAL (
    SELECT max(seq) AS seq, max(event ->> 'timestamp') AS at FROM run_events
    WHERE run_id = c.id COLLATE "default") ev ON true`;

/**
 * CLAIM_READ committing without waiting for its WAL flush: a claim is answered to no client. A
 * PostgreSQL crash can lose it (the runs are queued again, their attempt as before); the claiming
 * node's renewal then finds them not claimed and reports them lost, its end of them matches no
 * row, and its claims leave out runs it holds (`next` excludes $4), so it never claims a run it
 * still runs under the same attempt. A synchronous end flushes every earlier claim with it.
 */
export const CLAIM_READ_ASYNC = `${CLAIM_READ}
  WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL`;

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
