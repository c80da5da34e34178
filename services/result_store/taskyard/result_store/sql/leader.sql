-- The schedulers' election (migrations/0011_scheduler_leader.sql): one row,
-- taken, renewed and released by the database's clock. Each statement answers
-- with the row as it is afterwards: its term and holder, whether the asker
-- holds it, and the milliseconds left of the holder's lease. (When the UPDATE
-- matched nothing, the row read is the statement's snapshot of it: a change
-- committed meanwhile, say by another standby that won, may not show yet. So
-- whether the asker holds the row is whether its UPDATE took it, never read
-- from that row.)

-- name: acquire_leadership
-- A standby takes the row once it expired (or was released): a new term. Still
-- the asker's own and current: the same term again (an acquire delivered twice
-- must not end the term the first one began).
WITH taken AS (
  UPDATE scheduler_leader l
  SET term = CASE WHEN l.holder = :holder AND l.expires_at > now() THEN l.term ELSE l.term + 1 END,
      holder = :holder,
      expires_at = now() + :ttl_ms::bigint * interval '1 millisecond'
  WHERE l.expires_at <= now() OR l.holder = :holder
  RETURNING l.term, l.holder, l.expires_at
)
SELECT r.term, r.holder, EXISTS (SELECT 1 FROM taken) AS leader,
       greatest(0, ceil(extract(epoch FROM r.expires_at - now()) * 1000))::bigint AS expires_in_ms
FROM (SELECT * FROM taken
      UNION ALL
      SELECT l.term, l.holder, l.expires_at FROM scheduler_leader l WHERE NOT EXISTS (SELECT 1 FROM taken)
     ) AS r

-- name: renew_leadership
-- The leader extends its lease, only while the row is still its term: another
-- holder or term means it was deposed (nothing changes). A lease that expired
-- unrenewed (the store was out of reach) but that nobody took is still its own.
WITH kept AS (
  UPDATE scheduler_leader l
  SET expires_at = now() + :ttl_ms::bigint * interval '1 millisecond'
  WHERE l.holder = :holder AND l.term = :term::bigint
  RETURNING l.term, l.holder, l.expires_at
)
SELECT r.term, r.holder, EXISTS (SELECT 1 FROM kept) AS leader,
       greatest(0, ceil(extract(epoch FROM r.expires_at - now()) * 1000))::bigint AS expires_in_ms
FROM (SELECT * FROM kept
      UNION ALL
      SELECT l.term, l.holder, l.expires_at FROM scheduler_leader l WHERE NOT EXISTS (SELECT 1 FROM kept)
     ) AS r

-- name: release_leadership
-- The leader stopping hands the row over at once: it expires now, and the next
-- acquire (whoever makes it) starts a new term.
WITH released AS (
  UPDATE scheduler_leader l
  SET expires_at = least(l.expires_at, now())
  WHERE l.holder = :holder AND l.term = :term::bigint
  RETURNING l.term, l.holder, l.expires_at
)
SELECT r.term, r.holder, false AS leader,
       greatest(0, ceil(extract(epoch FROM r.expires_at - now()) * 1000))::bigint AS expires_in_ms
FROM (SELECT * FROM released
      UNION ALL
      SELECT l.term, l.holder, l.expires_at FROM scheduler_leader l WHERE NOT EXISTS (SELECT 1 FROM released)
     ) AS r

-- name: leader_term
-- (A column of the inserts.) The current term, read once by the statement: a
-- submission made through a scheduler whose term is over is inserted all the
-- same, and inserts.py tells the leader to load it.
(SELECT s.term FROM scheduler_leader s) AS leader_term
