-- Taskyard schema: less work for PostgreSQL per task (docs/internals.md, "The
-- database's work per task").

-- The time helpers, inlinable: a SQL function is inlined only when its body is
-- no more volatile than its declaration, and extract(epoch FROM timestamptz) and
-- timestamptz + interval are STABLE, so both ran as a separate function call
-- per use (about 13 per task). timezone('UTC', ...) turns the instant into a UTC
-- timestamp (IMMUTABLE) without changing it; the results are the same value for
-- value, NULL and the out-of-range errors included
-- (tests/integration/test_db_work.py).
CREATE OR REPLACE FUNCTION ty_us(ts timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce((extract(epoch FROM timezone('UTC', ts)) * 1000000)::bigint, 0) $$;

CREATE OR REPLACE FUNCTION ty_ts(us bigint) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT timezone('UTC', timestamp 'epoch' + us * interval '1 microsecond') $$;

-- Whether a transition is allowed, as one inlinable expression: the store
-- rewrites the body from taskyard.core.states.TRANSITIONS at start-up, with the
-- task_transitions table (migrate.sync_transitions). Until then it allows
-- nothing, so the guard below checks every transition against the table.
CREATE FUNCTION tasks_transition_allowed(src task_state, dst task_state) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT false $$;

-- The guard runs only for a transition the expression does not allow, which
-- the store never makes: a legal one no longer calls a PL/pgSQL function and
-- its lookup. AFTER rather than BEFORE: a BEFORE ROW trigger makes every UPDATE
-- lock the old row first (one more WAL record per row version); raising in an
-- AFTER trigger still fails the whole statement, so nothing illegal commits.
DROP TRIGGER tasks_guard_transition ON tasks;
CREATE TRIGGER tasks_guard_transition
  AFTER UPDATE OF state ON tasks
  FOR EACH ROW
  WHEN (NOT tasks_transition_allowed(OLD.state, NEW.state))
  EXECUTE FUNCTION tasks_guard_transition();

-- Room on each page for the next version of its rows. Every update of a task
-- changes its state, which partial indexes name, so none can be HOT; but one
-- that lands on the same page is logged smaller (prefix and suffix shared with
-- the old version) and skips locking the old version while it finds another
-- page, and dead versions are pruned in place rather than left scattered.
-- bench/db_work: 100 -> 70 took WAL per task from ~1,740 to ~1,580 bytes and
-- left the table smaller after a burst (no vacuum in between).
ALTER TABLE tasks SET (fillfactor = 70);
