-- Tasks inserted by anyone but the store (taskyard_submit, psql, an application):
-- their events are marked external (migrations/0017_transactional_submit.sql) and
-- read after a store's cursor, final ones only, in log order (arrivals.py).

-- name: arrivals_watermark
-- Every event below :xmin is final; the newest external event this snapshot sees
-- (committed, final or not: one above xmin waits for an older transaction); where
-- the retention purge has reached.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
       h.xid::text AS horizon_xid, h.id AS horizon_id,
       n.xid::text AS newest_xid, n.id AS newest_id
FROM event_horizon h
LEFT JOIN LATERAL (
  SELECT e.xid, e.id FROM events e WHERE e.external ORDER BY e.xid DESC, e.id DESC LIMIT 1
) n ON true

-- name: read_arrivals
-- A page of final external events after (:after_xid, :after_id), below :xmin, in
-- order, with their task as it is now (none: purged since).
SELECT e.xid::text AS xid, e.id AS event_id, t.id::text AS id, t.name, t.priority, t.queue,
       ty_us(t.created_at) AS created_at_us, t.flow, t.tenant, t.state::text AS state,
       coalesce(ty_us(t.run_at), 0) AS run_at_us
FROM events e
LEFT JOIN tasks t ON t.id = e.task_id
WHERE e.external
  AND (e.xid, e.id) > (:after_xid::text::xid8, :after_id::bigint)
  AND e.xid < :xmin::text::xid8
ORDER BY e.xid, e.id
LIMIT :limit::int
