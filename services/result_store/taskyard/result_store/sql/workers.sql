-- The servers registry.

-- name: heartbeat_rows
-- (The rows of the heartbeat statements.) processes: a JSON array of {"index",
-- "pid", "state", "rss_bytes", "running_tasks", "last_beat_us"}, one per worker
-- process (state "starting", "idle", "busy", "recycling" or "stopping").
unnest(:pool_ids::text[], :server_names::text[], :max_workers::int[], :active_workers::int[],
       :idle_workers::int[], :running::int[], :is_running::bool[], :task_names::text[],
       :states::text[], :rss_bytes::bigint[], :capacities::int[], :concurrency::int[],
       :processes::text[], :last_dispatch_us::bigint[])
  AS h(pool_id, server_name, max_workers, active_workers, idle_workers, running, is_running,
       task_names, state, rss_bytes, capacity, concurrency, processes, last_dispatch_us)

-- name: register_workers
-- The pools beating for the first time: inserted, in key order. A pool whose
-- row exists, or is being inserted by another store, is left to beat_workers.
INSERT INTO workers AS w (
  pool_id, server_name, max_workers, active_workers, idle_workers, running, is_running,
  task_names, state, rss_bytes, capacity, last_heartbeat, concurrency, processes, last_dispatch_at
)
SELECT h.pool_id, h.server_name, h.max_workers, h.active_workers, h.idle_workers, h.running,
       h.is_running, ARRAY(SELECT jsonb_array_elements_text(h.task_names::jsonb)), h.state,
       h.rss_bytes, h.capacity, now(), h.concurrency, h.processes::jsonb,
       ty_ts(nullif(h.last_dispatch_us, 0))
FROM {{heartbeat_rows}}
ORDER BY h.pool_id
ON CONFLICT (pool_id) DO NOTHING
RETURNING w.pool_id, ty_us(w.last_heartbeat) AS at_us

-- name: beat_workers
-- The other pools' heartbeats (:pool_ids less :registered). Each row is locked,
-- in key order, and read as last committed (a statement of its own: its snapshot
-- sees a row another store inserted meanwhile), so the previous state and
-- processes returned for the lifecycle events are the ones this beat replaces,
-- a sweep that declared the pool lost meanwhile included. A beat sent while the
-- pool drained that arrives after it stopped (or was lost) changes nothing.
WITH prev AS (
  SELECT p.pool_id, p.state, p.processes::text AS processes
  FROM workers p
  WHERE p.pool_id = ANY(:pool_ids::text[]) AND p.pool_id <> ALL(:registered::text[])
  ORDER BY p.pool_id
  FOR UPDATE
)
UPDATE workers w SET
  server_name = h.server_name, max_workers = h.max_workers,
  active_workers = h.active_workers, idle_workers = h.idle_workers,
  running = h.running, is_running = h.is_running,
  task_names = ARRAY(SELECT jsonb_array_elements_text(h.task_names::jsonb)), state = h.state,
  rss_bytes = h.rss_bytes, capacity = h.capacity, last_heartbeat = now(), concurrency = h.concurrency,
  processes = h.processes::jsonb,
  last_dispatch_at = coalesce(ty_ts(nullif(h.last_dispatch_us, 0)), w.last_dispatch_at)
FROM prev p, {{heartbeat_rows}}
WHERE w.pool_id = p.pool_id AND h.pool_id = p.pool_id
  AND NOT (p.state = 'STOPPED' AND h.state IN ('DRAINING', 'STOPPING', 'STOPPED'))
RETURNING w.pool_id, ty_us(w.last_heartbeat) AS at_us, p.state AS prev_state,
          p.processes AS prev_processes

-- name: task_names
SELECT DISTINCT n.name
FROM workers w, unnest(w.task_names) AS n(name)
WHERE w.last_heartbeat > now() - :max_age_ms::bigint * interval '1 millisecond' AND w.is_running
ORDER BY n.name

-- name: bump_counter
-- taskyard_counters[:name] += :delta (e.g. late_completions: outcomes fencing refused).
INSERT INTO taskyard_counters AS c (name, value) VALUES (:name::text, :delta::bigint)
ON CONFLICT (name) DO UPDATE SET value = c.value + EXCLUDED.value

-- name: counters
-- The store's counters; :names empty = all of them.
SELECT name, value FROM taskyard_counters
WHERE cardinality(:names::text[]) = 0 OR name = ANY(:names::text[])
ORDER BY name

-- name: declare_task_names
-- The names pools declare in their heartbeats, kept for good (a name already
-- there costs an index probe, no row version).
INSERT INTO task_names (name)
SELECT DISTINCT n.name FROM unnest(:names::text[]) AS n(name)
ON CONFLICT (name) DO NOTHING

-- name: declared_task_names
-- Which of :names some pool has ever declared.
SELECT name FROM task_names WHERE name = ANY(:names::text[])

-- name: all_task_names
-- Every name some pool has ever declared (what may be submitted).
SELECT name FROM task_names ORDER BY name

-- name: lose_silent_pools
-- Pools not stopped whose last heartbeat is older than :silent_ms: marked
-- STOPPED, oldest first. Each goes once, whichever store sweeps first (a row
-- another store holds is left to it; a heartbeat committed meanwhile takes it
-- out of the sweep). Its counts and processes go with it: its next heartbeat, if
-- it was only cut off, registers it again with its processes as new ones.
WITH silent AS (
  SELECT w.pool_id FROM workers w
  WHERE w.state <> 'STOPPED'
    AND w.last_heartbeat < now() - :silent_ms::bigint * interval '1 millisecond'
  ORDER BY w.last_heartbeat
  LIMIT :limit::int
  FOR UPDATE SKIP LOCKED
)
UPDATE workers w SET state = 'STOPPED', is_running = false, running = 0, active_workers = 0,
                     idle_workers = 0, processes = '[]'
FROM silent s
WHERE w.pool_id = s.pool_id
RETURNING w.pool_id, ty_us(now()) AS at_us
