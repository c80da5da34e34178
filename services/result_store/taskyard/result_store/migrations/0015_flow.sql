-- Taskyard schema: flow control (docs/flow-control.md). The leading scheduler
-- admits queued attempts through named limits and fairness weights kept here
-- (result_store/limits.py, sql/flow.sql); each task carries its own use of them.

-- Named limits: the serialized taskyard.v1.Limit (without usage, created_at and
-- updated_at, which are the columns). declared: written by a pool's declaration
-- (@task(rate_limit=..., concurrency=...)), which may rewrite it; a limit a user
-- created or updated is not rewritten by one.
CREATE TABLE flow_limits (
  name        text PRIMARY KEY,
  spec        bytea NOT NULL,
  declared    boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Fairness weights by key (a key without a row has weight 1).
CREATE TABLE flow_weights (
  key     text PRIMARY KEY,
  weight  integer NOT NULL CHECK (weight BETWEEN 1 AND 1000)
);

-- Bumped by every change of the two tables above, in its transaction: the
-- scheduler polls it (STORE_LIMITS with known_version), one row read. Every
-- change locks this row first, so changes are serialized and the caps
-- (core/limits.MAX_LIMITS, MAX_WEIGHTS) are counted under the lock.
CREATE TABLE flow_version (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  version  bigint NOT NULL
);
INSERT INTO flow_version (version) VALUES (0);

-- A task's flow control: the serialized bus FlowControl (fairness key and limit
-- uses), and the names of the limits it uses (what DeleteLimit checks). Both
-- NULL for a task that uses none, which then costs nothing more: no index
-- below has an entry for it.
ALTER TABLE tasks ADD COLUMN flow bytea, ADD COLUMN limit_names text[];

-- A new leader's concurrency counts: the leased attempts that use limits, by id
-- (STORE_LEASED_FLOW, keyset-paged; a task with only a fairness key holds no units).
CREATE INDEX tasks_leased_flow_idx ON tasks (id)
  WHERE state IN ('ASSIGNED', 'RUNNING') AND limit_names IS NOT NULL;

-- DeleteLimit: the tasks not final that use a limit (sql/flow.sql
-- limit_users: limit_names @> ARRAY[name]). Final rows leave it, so the check
-- does not read the history retention keeps.
CREATE INDEX tasks_limit_names_idx ON tasks USING gin (limit_names)
  WHERE limit_names IS NOT NULL AND state NOT IN ('SUCCESS', 'FAILURE', 'CANCELLED');
