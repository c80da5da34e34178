-- Taskyard schema, version 1. After the seed's queued_tasks / queued_task_logs /
-- queued_task_workers, named for Taskyard.

CREATE TYPE task_state AS ENUM (
  'PENDING', 'QUEUED', 'SCHEDULED', 'ASSIGNED', 'RUNNING',
  'SUCCESS', 'FAILURE', 'RETRYING', 'CANCELLED'
);

-- Unix microseconds of a timestamp, 0 for NULL (inlined by the planner).
CREATE FUNCTION ty_us(ts timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce((extract(epoch FROM ts) * 1000000)::bigint, 0) $$;

-- A timestamp from Unix microseconds, exact to the microsecond.
CREATE FUNCTION ty_ts(us bigint) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT timestamptz 'epoch' + us * interval '1 microsecond' $$;

-- Key/value settings the store syncs at start-up (e.g. the NOTIFY channel).
CREATE TABLE taskyard_config (
  key   text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO taskyard_config (key, value) VALUES ('notify_channel', 'queue_new_task');

CREATE TABLE tasks (
  id                uuid PRIMARY KEY,
  name              text NOT NULL,
  args              jsonb NOT NULL DEFAULT '[]',
  kwargs            jsonb NOT NULL DEFAULT '{}',
  priority          smallint NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 4),
  queue             text NOT NULL DEFAULT 'default',
  timeout_ms        bigint NOT NULL DEFAULT 0,
  max_retries       integer NOT NULL DEFAULT 0,
  request_id        text NOT NULL DEFAULT '',
  parent_id         uuid,
  root_id           uuid,
  labels            jsonb NOT NULL DEFAULT '{}',
  state             task_state NOT NULL DEFAULT 'QUEUED',
  -- The attempt that runs next (or runs now), starting at 1.
  attempt           integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  result            jsonb,
  -- The failure of the last failed attempt (every one is in task_failures).
  failure_type      text,
  failure_message   text,
  failure_traceback text,
  failure_attempt   integer,
  cancel_reason     text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now(),
  run_at            timestamptz,
  worker_id         text NOT NULL DEFAULT '',
  pool_id           text NOT NULL DEFAULT '',
  lease_token       text NOT NULL DEFAULT '',
  lease_expires_at  timestamptz,
  cancel_requested  boolean NOT NULL DEFAULT false,
  resume_requested  boolean NOT NULL DEFAULT false,
  trace_headers     jsonb NOT NULL DEFAULT '{}'
);

-- Idempotency: one task per non-empty request_id.
CREATE UNIQUE INDEX tasks_request_id_key ON tasks (request_id) WHERE request_id <> '';
-- Lane loading: QUEUED rows in dispatch order.
CREATE INDEX tasks_queued_idx ON tasks (priority, created_at, id) WHERE state = 'QUEUED';
-- Due rows: SCHEDULED / RETRYING by run_at.
CREATE INDEX tasks_due_idx ON tasks (run_at) WHERE state IN ('SCHEDULED', 'RETRYING');
-- Lease rescue: leased rows by expiry.
CREATE INDEX tasks_lease_idx ON tasks (lease_expires_at) WHERE state IN ('ASSIGNED', 'RUNNING');
-- Listing: newest first.
CREATE INDEX tasks_listing_idx ON tasks (created_at DESC, id DESC);
-- Task trees.
CREATE INDEX tasks_parent_idx ON tasks (parent_id) WHERE parent_id IS NOT NULL;

-- Every failed attempt, kept.
CREATE TABLE task_failures (
  id          bigserial PRIMARY KEY,
  task_id     uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  attempt     integer NOT NULL,
  type        text NOT NULL DEFAULT '',
  message     text NOT NULL DEFAULT '',
  traceback   text NOT NULL DEFAULT '',
  worker_id   text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_failures_task_idx ON task_failures (task_id, attempt);

CREATE TABLE task_logs (
  id          bigserial PRIMARY KEY,
  task_id     uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  type        text NOT NULL DEFAULT 'info',
  message     text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_logs_task_idx ON task_logs (task_id, id);

-- The servers registry: one row per worker pool, upserted by heartbeats.
CREATE TABLE workers (
  id              bigserial PRIMARY KEY,
  pool_id         text NOT NULL UNIQUE,
  server_name     text NOT NULL DEFAULT '',
  max_workers     integer NOT NULL DEFAULT 0,
  active_workers  integer NOT NULL DEFAULT 0,
  idle_workers    integer NOT NULL DEFAULT 0,
  running         integer NOT NULL DEFAULT 0,
  is_running      boolean NOT NULL DEFAULT false,
  last_heartbeat  timestamptz NOT NULL DEFAULT now(),
  task_names      text[] NOT NULL DEFAULT '{}',
  rss_bytes       bigint NOT NULL DEFAULT 0,
  capacity        integer NOT NULL DEFAULT 0,
  state           text NOT NULL DEFAULT ''
);
CREATE INDEX workers_heartbeat_idx ON workers (last_heartbeat);

-- The allowed transitions, synced at start-up from taskyard.core.states.TRANSITIONS.
CREATE TABLE task_transitions (
  from_state task_state NOT NULL,
  to_state   task_state NOT NULL,
  PRIMARY KEY (from_state, to_state)
);

CREATE FUNCTION tasks_guard_transition() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM task_transitions
    WHERE from_state = OLD.state AND to_state = NEW.state
  ) THEN
    RAISE EXCEPTION 'illegal task transition % -> % (task %)', OLD.state, NEW.state, OLD.id
      USING ERRCODE = 'check_violation', HINT = 'see taskyard.core.states.TRANSITIONS';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER tasks_guard_transition
  BEFORE UPDATE OF state ON tasks
  FOR EACH ROW EXECUTE FUNCTION tasks_guard_transition();

-- Wake the scheduler when tasks are inserted by anyone but the store itself
-- (the store sets taskyard.origin = 'store' on its connections and publishes
-- its own events after commit).
CREATE FUNCTION tasks_notify_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  channel text;
BEGIN
  IF coalesce(current_setting('taskyard.origin', true), '') = 'store' THEN
    RETURN NULL;
  END IF;
  SELECT value INTO channel FROM taskyard_config WHERE key = 'notify_channel';
  IF coalesce(channel, '') <> '' THEN
    PERFORM pg_notify(channel, '');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_notify_insert
  AFTER INSERT ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_notify_insert();
