-- Taskyard schema: the durable event log that WatchEvents reads (docs/events.md).
--
-- Each row is written in the same transaction as the change it describes, so
-- it exists exactly when the change does. Rows are read in (xid, id) order, and
-- only below the oldest transaction still running (pg_snapshot_xmin): a row of
-- a transaction that has not committed yet can then never appear before a
-- cursor a reader has already passed.
CREATE TABLE events (
  xid            xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id             bigserial,
  at             timestamptz NOT NULL DEFAULT now(),
  -- taskyard.v1.EventKind and TaskState / Priority by their proto numbers.
  kind           smallint NOT NULL,
  type           text NOT NULL,
  task_id        uuid,
  task_name      text,
  queue          text,
  state          smallint,
  attempt        int,
  root_id        uuid,
  priority       smallint,
  worker_id      text,
  pool_id        text,
  schedule_id    uuid,
  schedule_name  text,
  attributes     jsonb,
  PRIMARY KEY (xid, id)
);

-- The newest cursor the retention purge has deleted up to (one row): a cursor
-- before it asks for events that are gone (CURSOR_EXPIRED).
CREATE TABLE event_horizon (
  one  boolean PRIMARY KEY DEFAULT true CHECK (one),
  xid  xid8 NOT NULL,
  id   bigint NOT NULL
);
INSERT INTO event_horizon (xid, id) VALUES ('0'::xid8, 0);
