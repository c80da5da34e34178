-- Taskyard schema, version 2: the columns and tables of scheduling semantics
-- (dependencies, idempotency keys, context, cancellation steps, rescues,
-- periodic schedules, paused queues, per-task log offsets).

ALTER TABLE tasks
  -- Tasks that must all end SUCCESS before this one leaves PENDING.
  ADD COLUMN depends_on uuid[] NOT NULL DEFAULT '{}',
  -- Idempotency with a window (request_id is the permanent one).
  ADD COLUMN idempotency_key text NOT NULL DEFAULT '',
  ADD COLUMN idempotency_expires_at timestamptz,
  -- Nested context set by the task code (progress among it).
  ADD COLUMN context jsonb NOT NULL DEFAULT '{}',
  -- taskyard.v1.CancelStep of the step that stopped it (0 = not cancelled).
  ADD COLUMN cancel_step smallint NOT NULL DEFAULT 0,
  -- Dead-worker recoveries of this task (quarantined past the cap).
  ADD COLUMN rescues integer NOT NULL DEFAULT 0,
  -- The periodic schedule that fired it.
  ADD COLUMN schedule_id uuid,
  -- Next log offset (task_logs.seq) to hand out.
  ADD COLUMN log_seq bigint NOT NULL DEFAULT 0;

-- One live task per idempotency key (expired keys are cleared on reuse).
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key) WHERE idempotency_key <> '';
-- Dependents of a task: GIN on the array.
CREATE INDEX tasks_depends_on_idx ON tasks USING gin (depends_on) WHERE state = 'PENDING';
-- Retention purge: final rows by finish time.
CREATE INDEX tasks_finished_idx ON tasks (finished_at) WHERE state IN ('SUCCESS', 'FAILURE', 'CANCELLED');
-- Overlap checks of a schedule's runs.
CREATE INDEX tasks_schedule_idx ON tasks (schedule_id, created_at DESC) WHERE schedule_id IS NOT NULL;

-- Per-task position of a log line: 0, 1, 2, ... (the stream's offset).
ALTER TABLE task_logs
  ADD COLUMN seq bigint NOT NULL DEFAULT 0,
  ADD COLUMN attempt integer NOT NULL DEFAULT 1;
DROP INDEX task_logs_task_idx;
CREATE UNIQUE INDEX task_logs_task_seq ON task_logs (task_id, seq);

-- Periodic tasks. next_run_at is claimed with a guarded UPDATE so each due run
-- fires exactly once whatever the number of schedulers.
CREATE TABLE schedules (
  id             uuid PRIMARY KEY,
  name           text NOT NULL UNIQUE,
  -- The task template: a TaskSpec as JSON (name, args, kwargs, priority, ...).
  task           jsonb NOT NULL,
  interval_ms    bigint NOT NULL DEFAULT 0,
  cron           text NOT NULL DEFAULT '',
  time_zone      text NOT NULL DEFAULT '',
  paused         boolean NOT NULL DEFAULT false,
  -- taskyard.v1.OverlapPolicy.
  overlap        smallint NOT NULL DEFAULT 1,
  times_run      bigint NOT NULL DEFAULT 0,
  times_skipped  bigint NOT NULL DEFAULT 0,
  next_run_at    timestamptz,
  last_run_at    timestamptz,
  last_task_id   uuid,
  declared       boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK ((interval_ms > 0) <> (cron <> ''))
);
CREATE INDEX schedules_due_idx ON schedules (next_run_at) WHERE NOT paused;

-- Queue settings; a queue without a row is active.
CREATE TABLE queues (
  name        text PRIMARY KEY,
  paused      boolean NOT NULL DEFAULT false,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Counters the store keeps (e.g. late completions refused by fencing).
CREATE TABLE taskyard_counters (
  name   text PRIMARY KEY,
  value  bigint NOT NULL DEFAULT 0
);

-- The servers registry, per worker process and last dispatch.
ALTER TABLE workers
  ADD COLUMN concurrency       integer NOT NULL DEFAULT 0,
  ADD COLUMN last_dispatch_at  timestamptz,
  ADD COLUMN processes         jsonb NOT NULL DEFAULT '[]';
