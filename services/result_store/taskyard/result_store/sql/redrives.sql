-- Redrives (migrations/0019_redrives.sql): their creation, control, listing and steps.

-- name: redrive_columns
r.id::text AS id, r.state, r.filter::text AS filter, r.rate, r.note, r.created_by,
ty_us(r.created_at) AS created_at_us, ty_us(r.updated_at) AS updated_at_us,
ty_us(r.finished_at) AS finished_at_us, r.matched, r.requeued, r.skipped

-- name: not_dead_letters
-- Which of :task_ids are not dead letters (no such task, or not dead-lettered), in their order.
SELECT x.id::text AS id
FROM unnest(:task_ids::uuid[]) WITH ORDINALITY AS x(id, n)
WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = x.id AND t.dead_letter_reason > 0
                  AND (:all_tenants::boolean OR t.tenant = :tenant::text))
ORDER BY x.n
LIMIT :limit

-- name: lock_redrive_creation
-- Redrives are created one at a time (a transaction-level lock): the count of
-- active ones and the tasks pending in them stay true until this one commits.
SELECT pg_advisory_xact_lock(hashtext('taskyard.redrives.create'))

-- name: count_active_redrives
-- The active redrives of :owner: each tenant may have its own MAX_ACTIVE_REDRIVES.
SELECT count(*) AS n FROM redrives r WHERE r.state IN (1, 2) AND r.tenant = :owner::text

-- name: pending_elsewhere
-- Of :task_ids, the ones pending in an active redrive (RUNNING or PAUSED: a
-- PENDING item is only ever theirs), with that redrive and its state, in their order.
-- (With the redrive's tenant: a redrive the caller cannot see is not named.)
SELECT x.id::text AS id, i.redrive_id::text AS redrive_id, r.state, r.tenant
FROM unnest(:task_ids::uuid[]) WITH ORDINALITY AS x(id, n)
JOIN redrive_items i ON i.task_id = x.id AND i.outcome = 1
JOIN redrives r ON r.id = i.redrive_id
ORDER BY x.n
LIMIT :limit

-- name: redrives_holding
-- The active redrives holding dead letters a filter matches (a new redrive left
-- them out), at most :limit, oldest first.
SELECT r.id::text AS id, r.state, r.tenant
FROM redrives r
WHERE r.state IN (1, 2) AND EXISTS (
  SELECT 1 FROM redrive_items i JOIN tasks t ON t.id = i.task_id
  WHERE i.redrive_id = r.id AND i.outcome = 1 AND {{dead_letter_filter}})
ORDER BY r.created_at, r.id
LIMIT :limit

-- name: create_redrive
-- A redrive (RUNNING) and one PENDING item per dead letter the filter matches,
-- oldest failure first, each with the attempt it failed at: the set is fixed here.
WITH m AS (
  SELECT t.id, t.attempt, row_number() OVER (ORDER BY t.finished_at, t.id) AS seq
  FROM tasks t
  WHERE {{dead_letter_filter}}
), r AS (
  INSERT INTO redrives (id, filter, rate, note, created_by, matched, tenant)
  SELECT :redrive_id::uuid, :filter_json::jsonb, :rate::float8, :note::text, :created_by::text, count(*),
         :owner::text
  FROM m
  RETURNING *
), items AS (
  INSERT INTO redrive_items (redrive_id, seq, task_id, failed_attempt)
  SELECT r.id, m.seq, m.id, m.attempt FROM m CROSS JOIN r
)
SELECT {{redrive_columns}} FROM r

-- name: get_redrive
-- Of the caller's tenant (scopes.py); the scheduler's steps reach every tenant's.
SELECT {{redrive_columns}} FROM redrives r
WHERE r.id = :id::uuid AND (:all_tenants::boolean OR r.tenant = :tenant::text)

-- name: lock_redrive
-- The redrive row, locked for the rest of the transaction: its steps and its
-- controls are serialized by it (a step never races a cancel or another step of
-- the same redrive); with the current scheduler leader's term, for a step's fence.
SELECT r.state, (SELECT s.term FROM scheduler_leader s) AS leader_term
FROM redrives r WHERE r.id = :id::uuid AND (:all_tenants::boolean OR r.tenant = :tenant::text)
FOR UPDATE OF r

-- name: set_redrive_state
-- :state from one of :sources (numbers); DONE/CANCELLED set finished_at.
UPDATE redrives r
SET state = :state::smallint, updated_at = now(),
    finished_at = CASE WHEN :state::smallint IN (3, 4) THEN now() ELSE r.finished_at END
WHERE r.id = :id::uuid AND r.state = ANY(:sources::smallint[])
RETURNING {{redrive_columns}}

-- name: cancel_redrive_items
-- A cancelled redrive's items not reached: CANCELLED (their tasks stay dead letters).
UPDATE redrive_items i SET outcome = 4, at = now()
WHERE i.redrive_id = :id::uuid AND i.outcome = 1

-- name: redrive_step
-- One step: up to :limit PENDING items in order; each task still dead-lettered
-- at the attempt the item took -> QUEUED as a new attempt, as RetryTasks does
-- (retry_failed; :sources = sources of QUEUED), linked to the redrive and to the
-- failure it comes from; the item REQUEUED with that attempt, else SKIPPED and
-- why. The caller holds the redrive's lock (lock_redrive).
WITH items AS (
  SELECT i.seq, i.task_id, i.failed_attempt
  FROM redrive_items i
  WHERE i.redrive_id = :id::uuid AND i.outcome = 1
  ORDER BY i.seq
  LIMIT :limit
  FOR UPDATE SKIP LOCKED
), requeued AS (
  UPDATE tasks t
  SET state = 'QUEUED', attempt = t.attempt + 1, finished_at = NULL, started_at = NULL,
      run_at = NULL, lease_token = '', lease_expires_at = NULL, pool_id = '', worker_id = '',
      result = NULL, cancel_requested = false, resume_requested = false, updated_at = now(),
      dead_letter_reason = 0, redrive_id = :id::uuid, redriven_from_attempt = t.attempt,
      -- A fresh retry budget: the charged attempts so far are written off (0021).
      retry_base = t.attempt - t.uncharged_attempts,
      -- A breaker's refund of this attempt or an earlier one now gives nothing back (0024).
      written_off_attempt = t.attempt
  FROM items i
  WHERE t.id = i.task_id AND t.state = 'FAILURE' AND t.dead_letter_reason > 0
    AND t.attempt = i.failed_attempt AND t.state = ANY(:sources::task_state[])
  RETURNING t.id::text AS id, t.state::text AS state, t.attempt, t.name, t.priority,
            t.worker_id, ty_us(t.updated_at) AS at_us, t.queue, coalesce(t.root_id::text, '') AS root_id,
            ty_us(t.created_at) AS created_at_us, t.flow, t.tenant, i.failed_attempt
), linked AS (
  UPDATE task_failures f SET redrive_id = :id::uuid
  FROM requeued q
  WHERE f.task_id = q.id::uuid AND f.attempt = q.failed_attempt
), outcomes AS (
  UPDATE redrive_items i
  SET outcome = CASE WHEN q.id IS NULL THEN 3 ELSE 2 END,
      new_attempt = coalesce(q.attempt, 0), at = now(),
      detail = CASE WHEN q.id IS NOT NULL THEN ''
                    WHEN t.id IS NULL THEN 'the task no longer exists (purged)'
                    WHEN t.state <> 'FAILURE' THEN 'no longer a dead letter: it is ' || t.state::text
                    WHEN t.attempt <> it.failed_attempt
                    THEN 'no longer a dead letter at attempt ' || it.failed_attempt
                         || ': it is at attempt ' || t.attempt
                    ELSE 'no longer a dead letter' END
  FROM items it
  LEFT JOIN requeued q ON q.id::uuid = it.task_id
  LEFT JOIN tasks t ON t.id = it.task_id
  WHERE i.redrive_id = :id::uuid AND i.seq = it.seq
  RETURNING i.task_id, i.outcome
)
-- One row per item taken: its outcome, and a re-queued task's event and ref columns.
SELECT o.outcome, q.id, q.state, q.attempt, q.name, q.priority, q.worker_id, q.at_us, q.queue, q.root_id,
       q.created_at_us, q.flow, q.tenant
FROM outcomes o LEFT JOIN requeued q ON q.id::uuid = o.task_id

-- name: count_redrive_step
-- A step's counts on its redrive; DONE once no item is PENDING.
UPDATE redrives r
SET requeued = r.requeued + :requeued::bigint, skipped = r.skipped + :skipped::bigint, updated_at = now(),
    state = CASE WHEN EXISTS (SELECT 1 FROM redrive_items i WHERE i.redrive_id = r.id AND i.outcome = 1)
                 THEN r.state ELSE 3 END,
    finished_at = CASE WHEN EXISTS (SELECT 1 FROM redrive_items i WHERE i.redrive_id = r.id AND i.outcome = 1)
                       THEN r.finished_at ELSE now() END
WHERE r.id = :id::uuid
RETURNING {{redrive_columns}}

-- name: list_redrives
-- Newest first, keyset-paged after (:after_us, :after_id).
SELECT {{redrive_columns}}
FROM redrives r
WHERE (:after_us::bigint IS NULL OR (r.created_at, r.id) < (ty_ts(:after_us::bigint), :after_id::uuid))
  AND (:all_tenants::boolean OR r.tenant = :tenant::text)
ORDER BY r.created_at DESC, r.id DESC
LIMIT :limit

-- name: list_redrive_items
-- One redrive's items in the order they are taken, keyset-paged after :after_seq.
SELECT i.task_id::text AS task_id, i.seq, i.outcome, i.failed_attempt, i.new_attempt,
       ty_us(i.at) AS at_us, i.detail
FROM redrive_items i
WHERE i.redrive_id = :id::uuid AND i.seq > :after_seq::int
  AND EXISTS (SELECT 1 FROM redrives r
              WHERE r.id = i.redrive_id AND (:all_tenants::boolean OR r.tenant = :tenant::text))
ORDER BY i.seq
LIMIT :limit

-- name: active_redrives
-- The RUNNING ones, oldest first: at most :limit (a store refuses to have more
-- than that many RUNNING or PAUSED, writes/redrives.py).
SELECT {{redrive_columns}} FROM redrives r WHERE r.state = 1 ORDER BY r.created_at, r.id LIMIT :limit

-- name: purge_redrive_items
-- One chunk of retention: the items of redrives finished before :before_us.
WITH gone AS (
  DELETE FROM redrive_items x
  USING (
    SELECT i.redrive_id, i.seq FROM redrive_items i JOIN redrives r ON r.id = i.redrive_id
    WHERE r.finished_at < ty_ts(:before_us::bigint)
    LIMIT :limit::int
  ) p
  WHERE x.redrive_id = p.redrive_id AND x.seq = p.seq
  RETURNING 1
)
SELECT count(*) AS n FROM gone

-- name: purge_redrives
-- One chunk of retention: redrives finished before :before_us (with any items left).
WITH gone AS (
  DELETE FROM redrives x
  WHERE x.id IN (
    SELECT r.id FROM redrives r WHERE r.finished_at < ty_ts(:before_us::bigint)
    LIMIT :limit::int
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*) AS n FROM gone
