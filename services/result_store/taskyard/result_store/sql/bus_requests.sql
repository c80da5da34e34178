-- The state-changing bus requests carried out (bus_requests.py).

-- name: record_bus_requests
-- Record the message ids :ids (of kinds :kinds) in the caller's transaction; returns
-- those not recorded before. A concurrent transaction recording the same id makes
-- this one wait for its end, so of two stores that receive one message, one carries
-- it out. Ids older than :keep_s seconds are forgotten on the way.
WITH forgotten AS (
  DELETE FROM bus_requests b WHERE b.seen_at < now() - make_interval(secs => :keep_s::float8)
)
INSERT INTO bus_requests AS r (id, kind)
SELECT u.id, u.kind FROM unnest(:ids::text[], :kinds::integer[]) AS u(id, kind)
ON CONFLICT (id) DO NOTHING
RETURNING r.id
