-- Taskyard schema: the pools that have not stopped, by their last heartbeat
-- (sql/workers.sql lose_silent_pools). The store sweeps them every few seconds
-- for one whose heartbeats stopped; the workers table keeps every pool that
-- ever ran, so the sweep reads only those not stopped yet.
CREATE INDEX workers_live_heartbeat_idx ON workers (last_heartbeat) WHERE state <> 'STOPPED';
