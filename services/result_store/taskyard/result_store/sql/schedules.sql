-- Periodic schedules (table schedules, migration 0002). Times are Unix
-- microseconds from the caller's clock; next_run_at is computed in Python
-- (taskyard.core.schedule) and the guarded claim decides who fires a run.

-- name: schedule
s.id::text AS id, s.name, s.task::text AS task, s.interval_ms, s.cron, s.time_zone, s.paused,
s.overlap, s.times_run, s.times_skipped, ty_us(s.next_run_at) AS next_run_at_us,
ty_us(s.last_run_at) AS last_run_at_us, coalesce(s.last_task_id::text, '') AS last_task_id,
s.declared, ty_us(s.created_at) AS created_at_us, ty_us(s.updated_at) AS updated_at_us, s.tenant

-- name: insert_schedule
-- A name already taken returns no row (ALREADY_EXISTS).
INSERT INTO schedules AS s (id, name, task, interval_ms, cron, time_zone, paused, overlap,
                            next_run_at, created_at, updated_at, tenant)
VALUES (:id::uuid, :name, :task::jsonb, :interval_ms, :cron, :time_zone, :paused, :overlap,
        ty_ts(:next_us), ty_ts(:now_us), ty_ts(:now_us), :tenant::text)
ON CONFLICT (name) DO NOTHING
RETURNING {{schedule}}

-- name: declare_schedules
-- A pool's @task(cron=...) declarations, upserted by name. An existing declared
-- schedule keeps its id, pause and counters; its next run moves only when its
-- timing changed. A user-created schedule of the same name is left alone.
INSERT INTO schedules AS s (id, name, task, interval_ms, cron, time_zone, overlap, next_run_at,
                            declared, created_at, updated_at)
SELECT d.id, d.name, d.task::jsonb, d.interval_ms, d.cron, d.time_zone, d.overlap,
       ty_ts(d.next_us), true, ty_ts(:now_us), ty_ts(:now_us)
FROM unnest(:ids::uuid[], :names::text[], :tasks::text[], :intervals_ms::bigint[], :crons::text[],
            :time_zones::text[], :overlaps::smallint[], :next_us::bigint[])
     AS d(id, name, task, interval_ms, cron, time_zone, overlap, next_us)
ON CONFLICT (name) DO UPDATE
SET task = EXCLUDED.task, overlap = EXCLUDED.overlap,
    interval_ms = EXCLUDED.interval_ms, cron = EXCLUDED.cron, time_zone = EXCLUDED.time_zone,
    next_run_at = CASE WHEN (s.interval_ms, s.cron, s.time_zone)
                            IS DISTINCT FROM (EXCLUDED.interval_ms, EXCLUDED.cron, EXCLUDED.time_zone)
                            OR s.next_run_at IS NULL
                       THEN EXCLUDED.next_run_at ELSE s.next_run_at END,
    updated_at = CASE WHEN (s.task, s.overlap, s.interval_ms, s.cron, s.time_zone)
                           IS DISTINCT FROM (EXCLUDED.task, EXCLUDED.overlap, EXCLUDED.interval_ms,
                                             EXCLUDED.cron, EXCLUDED.time_zone)
                      THEN EXCLUDED.updated_at ELSE s.updated_at END
WHERE s.declared
RETURNING {{schedule}}

-- name: get_schedule
-- By id (:id, NULL when the text is not a UUID) or by name (:name), of the
-- caller's tenant (scopes.py): another tenant's is not found, as a missing one.
SELECT {{schedule}} FROM schedules s
WHERE (s.id = :id::uuid OR s.name = :name::text) AND (:all_tenants::boolean OR s.tenant = :tenant::text)
ORDER BY (s.id = :id::uuid) IS TRUE DESC
LIMIT 1

-- name: lock_schedule
SELECT {{schedule}} FROM schedules s
WHERE (s.id = :id::uuid OR s.name = :name::text) AND (:all_tenants::boolean OR s.tenant = :tenant::text)
ORDER BY (s.id = :id::uuid) IS TRUE DESC
LIMIT 1
FOR UPDATE

-- name: list_schedules
-- By name; keyset cursor = the last name of the previous page.
SELECT {{schedule}} FROM schedules s
WHERE (:after::text IS NULL OR s.name > :after::text) AND (:all_tenants::boolean OR s.tenant = :tenant::text)
ORDER BY s.name
LIMIT :limit

-- name: pause_schedule
UPDATE schedules s SET paused = true, updated_at = ty_ts(:now_us)
WHERE s.id = :id::uuid
RETURNING {{schedule}}

-- name: resume_schedule
UPDATE schedules s SET paused = false, next_run_at = ty_ts(:next_us), updated_at = ty_ts(:now_us)
WHERE s.id = :id::uuid
RETURNING {{schedule}}

-- name: delete_schedule
DELETE FROM schedules s WHERE s.id = :id::uuid RETURNING {{schedule}}

-- name: due_schedules
-- Unpaused schedules whose run is due by the caller's clock, with the state of
-- their last run's task (overlap). SKIP LOCKED: a concurrent claimer skips the
-- rows this one holds instead of waiting for them.
SELECT {{schedule}}, coalesce(t.state::text, '') AS last_state
FROM schedules s LEFT JOIN tasks t ON t.id = s.last_task_id
WHERE NOT s.paused AND s.next_run_at <= ty_ts(:now_us)
ORDER BY s.next_run_at
LIMIT :limit
FOR UPDATE OF s SKIP LOCKED

-- name: claim_schedules
-- The guard: a run is claimed only while next_run_at still equals the due time
-- read, so of two schedulers racing for one run exactly one claim wins. A NULL
-- task id records a skipped run (overlap SKIP).
UPDATE schedules s
SET next_run_at = ty_ts(c.next_us),
    last_run_at = CASE WHEN c.task_id IS NULL THEN s.last_run_at ELSE ty_ts(c.due_us) END,
    last_task_id = coalesce(c.task_id, s.last_task_id),
    times_run = s.times_run + CASE WHEN c.task_id IS NULL THEN 0 ELSE 1 END,
    times_skipped = s.times_skipped + CASE WHEN c.task_id IS NULL THEN 1 ELSE 0 END,
    updated_at = ty_ts(:now_us)
FROM unnest(:ids::uuid[], :due_us::bigint[], :next_us::bigint[], :task_ids::uuid[])
     AS c(id, due_us, next_us, task_id)
WHERE s.id = c.id AND s.next_run_at = ty_ts(c.due_us) AND NOT s.paused
RETURNING {{schedule}}

-- name: trigger_schedule
-- A manual run: counted, next_run_at untouched.
UPDATE schedules s
SET times_run = s.times_run + 1, last_run_at = ty_ts(:now_us), last_task_id = :task_id::uuid,
    updated_at = ty_ts(:now_us)
WHERE s.id = :id::uuid
RETURNING {{schedule}}

-- name: next_schedule_due
SELECT ty_us(min(s.next_run_at)) FROM schedules s WHERE NOT s.paused

-- name: schedule_clock
-- A firing that names no time fires by the database's clock (one for every scheduler).
SELECT ty_us(now())

-- name: mark_schedule_runs
-- The runs' tasks name their schedule (the insert statements do not know it).
UPDATE tasks t SET schedule_id = r.schedule_id
FROM unnest(:ids::uuid[], :schedule_ids::uuid[]) AS r(id, schedule_id)
WHERE t.id = r.id
