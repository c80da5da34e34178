-- The state-changing bus requests carried out (bus_requests.py).

-- name: record_bus_requests
-- Record the message ids :ids (of kinds :kinds) in the caller's transaction; returns
-- those not recorded before. A concurrent transaction recording the same id makes
-- this one wait for its end, so of two stores that receive one message, one carries
-- it out. Nothing is deleted here: the retention loop forgets old ids.
INSERT INTO bus_requests AS r (id, kind)
SELECT u.id, u.kind FROM unnest(:ids::text[], :kinds::integer[]) AS u(id, kind)
ON CONFLICT (id) DO NOTHING
RETURNING r.id

-- name: bus_request_replies
-- The replies kept for the recorded ids among :ids (NULL: none kept).
SELECT b.id, b.reply FROM bus_requests b WHERE b.id = ANY(:ids::text[])

-- name: keep_bus_replies
-- Keep the replies :replies of the ids :ids, recorded in the caller's transaction.
UPDATE bus_requests b SET reply = u.reply
FROM unnest(:ids::text[], :replies::bytea[]) AS u(id, reply)
WHERE b.id = u.id

-- name: forget_bus_requests
-- Forget at most :limit ids recorded more than :keep_s seconds ago, oldest first; the
-- count forgotten. Rows another store is forgetting are skipped, not waited for.
WITH gone AS (
  DELETE FROM bus_requests b
  WHERE b.id IN (
    SELECT o.id FROM bus_requests o
    WHERE o.seen_at < now() - make_interval(secs => :keep_s::float8)
    ORDER BY o.seen_at
    LIMIT :limit::integer
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*) FROM gone
