-- The durable event log (events, event_horizon; migrations/0010_events.sql).

-- name: event_watermark
-- Every event below :xmin is final (no transaction that could still write
-- one below it is running), and where the retention purge has reached.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, h.xid::text AS horizon_xid,
       h.id AS horizon_id
FROM event_horizon h

-- name: read_events
-- A page of final events after (:after_xid, :after_id), below :xmin, in order.
SELECT e.xid::text AS xid, e.id, ty_us(e.at) AS at_us, e.kind, e.type,
       coalesce(e.task_id::text, '') AS task_id, coalesce(e.task_name, '') AS task_name,
       coalesce(e.queue, '') AS queue, coalesce(e.state, 0) AS state,
       coalesce(e.attempt, 0) AS attempt, coalesce(e.root_id::text, '') AS root_id,
       coalesce(e.priority, 0) AS priority, coalesce(e.worker_id, '') AS worker_id,
       coalesce(e.pool_id, '') AS pool_id, coalesce(e.schedule_id::text, '') AS schedule_id,
       coalesce(e.schedule_name, '') AS schedule_name, e.tenant, e.attributes::text AS attributes
FROM events e
WHERE (e.xid, e.id) > (:after_xid::text::xid8, :after_id::bigint)
  AND e.xid < :xmin::text::xid8
ORDER BY e.xid, e.id
LIMIT :limit::int

-- name: event_purge_bound
-- The first event to keep: the oldest (in log order) committed at or after
-- :before_us. Everything before it goes (a few rows of slightly later
-- transactions with smaller xids may go with them). When there is none, the
-- watermark: what this snapshot sees is all older than :before_us, but an event
-- committed after it is not, and must not go with them.
SELECT b.xid::text AS xid, b.id
FROM ((SELECT e.xid, e.id FROM events e
       WHERE e.at >= ty_ts(:before_us::bigint)
       ORDER BY e.xid, e.id
       LIMIT 1)
      UNION ALL
      SELECT pg_snapshot_xmin(pg_current_snapshot()), 0) AS b
ORDER BY b.xid, b.id
LIMIT 1

-- name: purge_events
-- Delete up to :limit final events before (:bound_xid, :bound_id) and move the
-- horizon to the last one deleted.
-- Only final ones: a running transaction may still add events below a newer one.
WITH gone AS (
  DELETE FROM events d
  WHERE (d.xid, d.id) IN (
    SELECT o.xid, o.id FROM events o
    WHERE (o.xid, o.id) < (:bound_xid::text::xid8, :bound_id::bigint)
      AND o.xid < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY o.xid, o.id
    LIMIT :limit::int
  )
  RETURNING d.xid, d.id
), last AS (
  SELECT g.xid, g.id FROM gone g ORDER BY g.xid DESC, g.id DESC LIMIT 1
)
UPDATE event_horizon h SET xid = l.xid, id = l.id
FROM last l
WHERE (l.xid, l.id) > (h.xid, h.id)
RETURNING (SELECT count(*) FROM gone) AS purged

-- name: summarize_events
-- What up to :limit final events after (:after_xid, :after_id), below :xmin, add
-- up to (SummarizeEventsReply): one row, whatever the number of events. Kinds
-- and states by their proto numbers: task 1, schedule 5; SUCCESS 6, FAILURE 7,
-- CANCELLED 9. The distinct lists take one more than their cap, so that the
-- caller can tell a cap was reached.
WITH w AS (
  SELECT e.xid, e.id, e.kind, e.task_id, e.queue, e.task_name, e.state, e.at
  FROM events e
  WHERE (e.xid, e.id) > (:after_xid::text::xid8, :after_id::bigint)
    AND e.xid < :xmin::text::xid8
    -- The caller's tenant's events only (scopes.py).
    AND (:all_tenants::boolean OR e.tenant = :tenant::text)
  ORDER BY e.xid, e.id
  LIMIT :limit::int
), last AS (
  SELECT w.xid, w.id FROM w ORDER BY w.xid DESC, w.id DESC LIMIT 1
), ids AS (
  SELECT DISTINCT w.task_id FROM w WHERE w.kind = 1 LIMIT :max_task_ids::int + 1
), entered AS (
  SELECT DISTINCT coalesce(w.queue, '') AS queue, coalesce(w.task_name, '') AS task_name,
         coalesce(w.state, 0) AS state
  FROM w WHERE w.kind = 1 LIMIT :max_entered::int + 1
), finished AS (
  SELECT w.state, ty_us(w.at) AS at_us, coalesce(ty_us(w.at) - ty_us(t.created_at), -1) AS latency_us
  FROM w LEFT JOIN tasks t ON t.id = w.task_id
  WHERE w.kind = 1 AND w.state IN (6, 7, 9)
)
SELECT (SELECT l.xid::text FROM last l) AS last_xid, (SELECT l.id FROM last l) AS last_id,
       c.events, c.kinds, c.schedule_made_task,
       i.task_ids, en.queues, en.task_names, en.states,
       f.states AS finished_states, f.at_us AS finished_at_us, f.latency_us
FROM (SELECT count(*) AS events, coalesce(array_agg(DISTINCT w.kind), '{}') AS kinds,
             coalesce(bool_or(w.kind = 5 AND w.task_id IS NOT NULL), false) AS schedule_made_task
      FROM w) c,
     (SELECT coalesce(array_agg(ids.task_id::text), '{}') AS task_ids FROM ids) i,
     (SELECT coalesce(array_agg(entered.queue), '{}') AS queues,
             coalesce(array_agg(entered.task_name), '{}') AS task_names,
             coalesce(array_agg(entered.state), '{}') AS states
      FROM entered) en,
     (SELECT coalesce(array_agg(finished.state), '{}') AS states,
             coalesce(array_agg(finished.at_us), '{}') AS at_us,
             coalesce(array_agg(finished.latency_us), '{}') AS latency_us
      FROM finished) f
