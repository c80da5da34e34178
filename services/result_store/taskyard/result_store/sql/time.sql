-- Time: the scheduler's due heap, failed attempts, ExplainTask facts.

-- name: load_due
-- SCHEDULED/RETRYING rows due within :window_ms by the database clock, soonest first
-- (the scheduler's heap is a cache of these). One row even when none is due, so
-- the database's now() always comes back.
SELECT ty_us(now()) AS now_us, d.id, d.run_at_us
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
  SELECT t.id::text AS id, ty_us(t.run_at) AS run_at_us
  FROM tasks t
  WHERE t.state IN ('SCHEDULED', 'RETRYING')
    AND t.run_at <= now() + :window_ms::bigint * interval '1 millisecond'
  ORDER BY t.run_at
  LIMIT :limit
) AS d ON true

-- name: failure_counts
-- How many failed attempts each of some tasks has, and how many of them a
-- circuit breaker refunded (tasks without one: no row). Counted here, not from
-- the failures: a throttled task may have thousands.
SELECT f.task_id::text AS task_id, count(*)::int AS total,
       (count(*) FILTER (WHERE f.refunded_at IS NOT NULL))::int AS refunded
FROM task_failures f
WHERE f.task_id = ANY(ARRAY({{scoped_task_ids}}))
GROUP BY f.task_id

-- name: scoped_task_ids
-- (Of :task_ids, the caller's tenant's tasks (scopes.py): another tenant's have no failures to show.)
SELECT s.id FROM tasks s WHERE s.id = ANY(:task_ids::uuid[]) AND (:all_tenants::boolean OR s.tenant = :tenant::text)

-- name: task_failures
-- The last :per_task failed attempts of each of some tasks, oldest first, with
-- failure_counts' figures on each row. A throttled failure written without its
-- traceback (fail_attempts) that is the task's latest shows the one on the task's
-- row.
SELECT c.task_id::text AS task_id, c.total, c.refunded_n, f.attempt, f.type, f.message,
       CASE WHEN f.traceback = '' AND f.attempt = t.failure_attempt
            THEN coalesce(t.failure_traceback, '') ELSE f.traceback END AS traceback,
       ty_us(f.created_at) AS failed_at_us, ty_us(f.retry_at) AS retry_at_us,
       f.group_id, coalesce(f.redrive_id::text, '') AS redrive_id,
       f.refunded_at IS NOT NULL AS refunded
FROM (
  SELECT f.task_id, count(*)::int AS total,
         (count(*) FILTER (WHERE f.refunded_at IS NOT NULL))::int AS refunded_n
  FROM task_failures f
  WHERE f.task_id = ANY(ARRAY({{scoped_task_ids}}))
  GROUP BY f.task_id
) c
JOIN tasks t ON t.id = c.task_id
-- The newest through task_failures_task_idx (task_id, attempt), the rest unread.
CROSS JOIN LATERAL (
  SELECT f.* FROM task_failures f
  WHERE f.task_id = c.task_id
  ORDER BY f.attempt DESC, f.id DESC
  LIMIT :per_task::int
) f
ORDER BY f.task_id, f.attempt, f.id

-- name: explain_facts
-- What stands between a task and a worker: its queue's pause flag, the live
-- pools that serve its name (capacity, attempts held), the QUEUED tasks of its
-- tenant those pools will take before it (the scheduler's order: lane, then arrival), and
-- its dependencies that have not succeeded. :max_age_ms = heartbeat age limit.
WITH t AS (
  SELECT t.id, t.name, t.queue, t.priority, t.created_at, t.depends_on, t.tenant
  FROM tasks t WHERE t.id = :id::uuid AND (:all_tenants::boolean OR t.tenant = :tenant::text)
), live AS (
  SELECT w.capacity, w.running, w.task_names
  FROM workers w, t
  WHERE w.is_running AND w.last_heartbeat > now() - :max_age_ms::bigint * interval '1 millisecond'
    AND t.name = ANY(w.task_names)
), served AS (
  SELECT DISTINCT n.name FROM live, unnest(live.task_names) AS n(name)
)
SELECT
  EXISTS (SELECT 1 FROM queues q, t WHERE q.name = t.queue AND q.paused) AS queue_paused,
  (SELECT count(*) FROM live)::int AS pools,
  (SELECT coalesce(sum(capacity), 0) FROM live)::int AS capacity,
  (SELECT coalesce(sum(running), 0) FROM live)::int AS running,
  (SELECT count(*) FROM tasks a, t
   WHERE a.state = 'QUEUED' AND a.id <> t.id
     -- Its own tenant's: fair share serves tenants in turn, and another tenant's
     -- backlog is nothing this tenant may learn of.
     AND a.tenant = t.tenant
     AND (a.priority, a.created_at, a.id) < (t.priority, t.created_at, t.id)
     AND a.name IN (SELECT name FROM served)) AS depth_ahead,
  ARRAY(SELECT d::text FROM t, unnest(t.depends_on) AS d
        WHERE NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = d AND x.state = 'SUCCESS')
        ORDER BY 1) AS waiting_on
FROM t
