-- Queue operations, status, the servers registry and retention.

-- name: set_queue_paused
INSERT INTO queues AS q (name, paused, updated_at, tenant)
VALUES (:name::text, :paused::boolean, now(), :owner::text)
ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now()
RETURNING q.name, q.paused

-- name: paused_queues
SELECT q.name FROM queues q
WHERE q.paused AND (:all_tenants::boolean OR q.tenant = :tenant::text)
ORDER BY q.name

-- name: clear_queue
-- Cancel every task of a queue (:queue, '' = all) that waits to run: :sources = the
-- pending states that may become CANCELLED (sources_of(CANCELLED) minus the
-- leased ones). Full records: they are finals, so the dependency resolver and
-- the result cache follow at once (not at the 30 s sweep).
UPDATE tasks t
SET state = 'CANCELLED', cancel_reason = :reason::text, cancel_step = 1,
    finished_at = now(), updated_at = now(), lease_token = '', lease_expires_at = NULL
WHERE (:queue::text = '' OR t.queue = :queue::text) AND t.state = ANY(:sources::task_state[])
  AND (:all_tenants::boolean OR t.tenant = :tenant::text)
RETURNING {{record}}, t.has_dependents AS waited_on

-- name: retry_failed
-- FAILURE -> QUEUED as a new attempt (:sources = sources of QUEUED, checked against
-- FAILURE by the caller). The failure stays on the row and in task_failures; the
-- task is no longer a dead letter, nor its attempt a redrive's (0018_dead_letters.sql).
-- Its retry budget starts again: the charged attempts so far are written off
-- (retry_base, 0021_redrive_budget.sql), as a redrive does.
UPDATE tasks t
SET state = 'QUEUED', attempt = t.attempt + 1, finished_at = NULL, started_at = NULL,
    dead_letter_reason = 0, redriven_from_attempt = 0,
    retry_base = t.attempt - t.uncharged_attempts,
    -- A breaker's refund of this attempt or an earlier one now gives nothing back (0024).
    written_off_attempt = t.attempt,
    run_at = NULL, lease_token = '', lease_expires_at = NULL, pool_id = '', worker_id = '',
    result = NULL, cancel_requested = false, resume_requested = false, updated_at = now()
WHERE t.id IN (
  SELECT f.id FROM tasks f
  WHERE f.state = 'FAILURE'
    AND (:queue::text = '' OR f.queue = :queue::text)
    AND (:name::text = '' OR f.name = :name::text)
    AND (cardinality(:ids::uuid[]) = 0 OR f.id = ANY(:ids::uuid[]))
    AND (:all_tenants::boolean OR f.tenant = :tenant::text)
  ORDER BY f.finished_at, f.id
  LIMIT :limit::int
  FOR UPDATE SKIP LOCKED
) AND t.state = ANY(:sources::task_state[])
RETURNING t.id::text AS id, t.state::text AS state, t.attempt, t.name, t.priority,
          t.worker_id, ty_us(t.updated_at) AS at_us, t.queue, coalesce(t.root_id::text, '') AS root_id,
          ty_us(t.created_at) AS created_at_us, t.flow, t.tenant

-- name: queue_counts
SELECT t.queue, t.state::text AS state, count(*) AS n
FROM tasks t
WHERE (:queue::text = '' OR t.queue = :queue::text) AND (:all_tenants::boolean OR t.tenant = :tenant::text)
GROUP BY t.queue, t.state

-- name: queue_recent
-- Mean run time of the successes of the last hour; failures since midnight UTC.
SELECT t.queue,
       avg(extract(epoch FROM (t.finished_at - t.started_at)))
         FILTER (WHERE t.state = 'SUCCESS' AND t.started_at IS NOT NULL
                 AND t.finished_at > now() - interval '1 hour') AS mean_seconds,
       count(*) FILTER (WHERE t.state = 'FAILURE'
                        AND t.finished_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
         AS failed_today
FROM tasks t
WHERE t.state IN ('SUCCESS', 'FAILURE')
  AND t.finished_at >= least(now() - interval '1 hour',
                             date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
  AND (:queue::text = '' OR t.queue = :queue::text)
  AND (:all_tenants::boolean OR t.tenant = :tenant::text)
GROUP BY t.queue

-- name: queue_names
SELECT q.name, q.paused FROM queues q
WHERE (:queue::text = '' OR q.name = :queue::text) AND (:all_tenants::boolean OR q.tenant = :tenant::text)

-- name: servers_summary
SELECT count(*)::int AS servers, coalesce(sum(w.capacity), 0)::int AS capacity,
       coalesce(sum(w.running), 0)::int AS running
FROM workers w
WHERE w.last_heartbeat > now() - :max_age_ms::bigint * interval '1 millisecond' AND w.is_running

-- name: counter_value
SELECT coalesce((SELECT c.value FROM taskyard_counters c WHERE c.name = :name::text), 0) AS value

-- name: list_servers
SELECT w.pool_id, w.server_name, w.max_workers, w.active_workers, w.idle_workers, w.running,
       w.is_running, ty_us(w.last_heartbeat) AS last_heartbeat_us, w.state, w.task_names,
       w.rss_bytes, w.capacity, ty_us(w.last_dispatch_at) AS last_dispatch_us,
       w.processes::text AS processes, w.concurrency
FROM workers w
WHERE w.last_heartbeat > now() - :max_age_ms::bigint * interval '1 millisecond'
ORDER BY w.server_name, w.pool_id

-- name: purge_final
-- One chunk of the retention purge: final tasks finished before :before_us (unix us),
-- oldest first, their logs and failures with them (ON DELETE CASCADE). Never a
-- non-final row, nor a dead letter: it is kept until a redrive or
-- PurgeDeadLetters takes it. The conditions are tasks_retention_idx's
-- (0024_failure_rows.sql), so a chunk reads the rows it deletes and not the
-- dead letters it keeps: keep them in step. The ids as an array, so the delete
-- finds each by its key (IN let the planner hash-join every purgeable row).
-- A tenant's PurgeTasks deletes its own tenant's tasks only (the retention loop
-- and an operator over every tenant pass all_tenants).
DELETE FROM tasks t
WHERE t.id = ANY(ARRAY(
  SELECT p.id FROM tasks p
  WHERE p.state IN ('SUCCESS', 'FAILURE', 'CANCELLED') AND p.finished_at < ty_ts(:before_us::bigint)
    AND p.dead_letter_reason = 0 AND (:all_tenants::boolean OR p.tenant = :tenant::text)
  ORDER BY p.finished_at
  LIMIT :limit::int
  FOR UPDATE SKIP LOCKED
)) AND t.state IN ('SUCCESS', 'FAILURE', 'CANCELLED') AND t.dead_letter_reason = 0
RETURNING t.id::text AS id
