-- Taskyard schema: a task's events are logged by the statement that changes it.
--
-- Until now a write ran its statement, then a COPY of the events its Python built
-- from the returned rows, inside BEGIN ... COMMIT: four round trips for a lone
-- write. These statement-level triggers log every task's state change in the
-- statement itself (one INSERT ... SELECT over the transition tables), so a lone
-- write is one autocommit statement with its events committed with it or not at
-- all, and a drain of many rows writes its events without Python building them.
-- Events of the other subjects (pools, queues, schedules, limits) are still
-- written by the store (event_log.write), which skips task events.

-- taskyard.v1.TaskState's number of a state (the events table keeps numbers).
CREATE FUNCTION ty_state_number(s task_state) RETURNS smallint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE s
    WHEN 'PENDING' THEN 1 WHEN 'QUEUED' THEN 2 WHEN 'SCHEDULED' THEN 3 WHEN 'ASSIGNED' THEN 4
    WHEN 'RUNNING' THEN 5 WHEN 'SUCCESS' THEN 6 WHEN 'FAILURE' THEN 7 WHEN 'RETRYING' THEN 8
    WHEN 'CANCELLED' THEN 9 END::smallint
$$;

-- The event type of a state (records.EVENT_BY_STATE).
CREATE FUNCTION ty_state_event(s task_state) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE s
    WHEN 'PENDING' THEN 'task.queued' WHEN 'QUEUED' THEN 'task.queued'
    WHEN 'SCHEDULED' THEN 'task.scheduled' WHEN 'ASSIGNED' THEN 'task.assigned'
    WHEN 'RUNNING' THEN 'task.started' WHEN 'SUCCESS' THEN 'task.succeeded'
    WHEN 'FAILURE' THEN 'task.failed' WHEN 'RETRYING' THEN 'task.retrying'
    WHEN 'CANCELLED' THEN 'task.cancelled' END
$$;

-- A new task's events: it is queued, pending or scheduled; one leased at birth
-- (the scheduler's fast path) was queued, then assigned.
CREATE FUNCTION tasks_log_inserted() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id)
  SELECT 1, ty_state_event(e.state), n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(e.state), n.attempt, n.priority,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(n.worker_id, '') END,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(substring(n.worker_id FROM '^(.*)/w'), '') END
  FROM new_rows n
  CROSS JOIN LATERAL (
    VALUES (1, CASE WHEN n.state IN ('SCHEDULED', 'PENDING') THEN n.state ELSE 'QUEUED'::task_state END),
           (2, CASE WHEN n.state = 'ASSIGNED' THEN n.state END)
  ) AS e(step, state)
  WHERE e.state IS NOT NULL
  ORDER BY e.step;
  RETURN NULL;
END
$$;

-- A changed task's event, one for each row whose state the statement changed.
-- The join of the old and new rows is a hash join whatever their count: the
-- plan is cached per session, and one made for a lone row (a nested loop) would
-- compare every pair of a later drain's thousand rows.
CREATE FUNCTION tasks_log_changed() RETURNS trigger
  LANGUAGE plpgsql SET enable_nestloop = off AS $$
BEGIN
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id, attributes)
  SELECT 1, ty_state_event(n.state), n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(n.state), n.attempt, n.priority,
         nullif(n.worker_id, ''), nullif(substring(n.worker_id FROM '^(.*)/w'), ''),
         CASE WHEN n.state IN ('FAILURE', 'RETRYING') AND coalesce(n.failure_type, '') <> ''
              THEN jsonb_build_object('failure_type', n.failure_type) END
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE o.state <> n.state;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_log_inserted
  AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_log_inserted();

CREATE TRIGGER tasks_log_changed
  AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tasks_log_changed();
