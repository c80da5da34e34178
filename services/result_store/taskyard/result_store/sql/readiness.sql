-- Readiness: whether this store can commit now, and the database's clock.

-- name: readiness_check
-- A transaction id makes this one-statement transaction write a commit record
-- (no row changes): it fails where a commit would (a standby in recovery, WAL
-- that cannot be written) and waits where commits wait (a frozen server).
-- clock_timestamp() is the time now, not the transaction's start.
SELECT pg_current_xact_id()::text AS xid,
       extract(epoch FROM clock_timestamp())::float8 AS db_now
