-- Taskyard schema: transactional enqueue (docs/transactional-enqueue.md).
--
-- taskyard_submit(name, args, kwargs, options) writes the task row the store
-- would have written for the same SubmitTask, inside the caller's own
-- transaction on the same database: the task exists exactly when that
-- transaction commits. taskyard_submit_many(tasks) does the same for a list of
-- calls with one INSERT. The statement triggers on tasks do the rest, as for any
-- row written outside the store: tasks_log_inserted logs its task.queued (or
-- task.scheduled) event, and tasks_notify_insert NOTIFYs the channel the stores
-- LISTEN on, delivered at COMMIT; PostgreSQL folds the identical notifications
-- of one transaction into one, so 10,000 calls wake the scheduler once, and its
-- reload pages through every QUEUED row.
--
-- The function checks what the gateway checks (core/validation.py, core/names.py,
-- core/payload.py: the constants of ty_submission_of must equal those; a test
-- compares them)
-- and refuses a bad call with SQLSTATE 22023 (invalid_parameter_value): the
-- message is "REASON: field: description", DETAIL is the reason code alone
-- (UNKNOWN_TASK_NAME, PAYLOAD_TOO_LARGE, PAYLOAD_TOO_DEEP, BATCH_TOO_LARGE or
-- INVALID_ARGUMENT, the gateway's ErrorInfo reasons) and HINT the field. The error aborts the
-- caller's transaction, so its own writes roll back with it.
--
-- Named taskyard_* in the store's schema rather than in a schema "taskyard":
-- the deployments connect as a role named taskyard, and PostgreSQL's default
-- search_path ("$user", public) would then put every later unqualified CREATE
-- of the store's migrations into that schema.

-- The byte cap on args + kwargs (Settings.max_payload_bytes): the store writes
-- its own setting here at start-up (migrate.py), as it does the NOTIFY channel.
INSERT INTO taskyard_config (key, value) VALUES ('max_payload_bytes', '262144')
ON CONFLICT (key) DO NOTHING;

-- A UUIDv7 (core/ids.py's layout): 48 bits of the millisecond clock, version 7,
-- the rest random (a v4's bits, its variant kept). Time order keeps the primary
-- key's index append-mostly.
CREATE FUNCTION ty_uuid7() RETURNS uuid
  LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

-- How deep lists and objects nest in a value ([[1]] is 2), counted up to
-- most + 1 (then the walk stops).
CREATE FUNCTION ty_json_depth(value jsonb, most int) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  WITH RECURSIVE walk(v, depth) AS (
    SELECT value, 1 WHERE jsonb_typeof(value) IN ('array', 'object')
    UNION ALL
    SELECT c.v, w.depth + 1
    FROM walk w
    CROSS JOIN LATERAL (
      SELECT e AS v FROM jsonb_array_elements(CASE WHEN jsonb_typeof(w.v) = 'array' THEN w.v END) AS e
      UNION ALL
      SELECT e.value FROM jsonb_each(CASE WHEN jsonb_typeof(w.v) = 'object' THEN w.v END) AS e
    ) AS c
    WHERE jsonb_typeof(c.v) IN ('array', 'object') AND w.depth <= most
  )
  SELECT coalesce(max(depth), 0) FROM walk
$$;

-- Refuse a call: SQLSTATE 22023, the reason first in the message, alone in DETAIL.
CREATE FUNCTION ty_submit_refuse(reason text, field text, description text) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING
    ERRCODE = 'invalid_parameter_value',
    MESSAGE = format('%s: %s: %s', reason, field, description),
    DETAIL = reason,
    HINT = field;
END
$$;

-- A string option, or NULL when absent (JSON null counts as absent); path: the
-- call's field prefix ('' or 'tasks[3].').
CREATE FUNCTION ty_submit_text(options jsonb, key text, most int, path text) RETURNS text
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v jsonb := options -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(v) <> 'string' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.' || key, 'must be a string');
  END IF;
  IF length(v #>> '{}') > most THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.' || key,
                             format('must be at most %s characters, got %s', most, length(v #>> '{}')));
  END IF;
  RETURN v #>> '{}';
END
$$;

-- A number option, or NULL when absent.
CREATE FUNCTION ty_submit_number(options jsonb, key text, path text) RETURNS numeric
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v jsonb := options -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(v) <> 'number' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.' || key, 'must be a number');
  END IF;
  RETURN (v #>> '{}')::numeric;
END
$$;

-- One checked call, as the row to write (nothing written, nothing looked up but
-- the name): what taskyard_submit and taskyard_submit_many share.
CREATE TYPE ty_submission AS (
  id uuid, name text, args jsonb, kwargs jsonb, priority smallint, queue text, timeout_ms bigint,
  max_retries int, request_id text, labels jsonb, state task_state, created_at timestamptz,
  run_at timestamptz, idempotency_key text, idempotency_expires_at timestamptz
);

-- Check one call by the gateway's rules and build its row. path: the prefix of the
-- fields an error names ('' for taskyard_submit, 'tasks[3].' in a batch); cap: the
-- payload cap in bytes; accepted: the acceptance time (created_at, and what an ETA,
-- a countdown and an idempotency window count from).
CREATE FUNCTION ty_submission_of(
  name text, args jsonb, kwargs jsonb, options jsonb, accepted timestamptz, path text, cap bigint
) RETURNS ty_submission
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  -- core/validation.py, core/names.py, core/payload.py, core/graph.py.
  max_name_chars constant int := 255;
  max_request_id_chars constant int := 255;
  max_idempotency_key_chars constant int := 255;
  max_labels constant int := 64;
  max_label_key_chars constant int := 63;
  max_label_value_chars constant int := 255;
  max_timeout_ms constant bigint := 24 * 3600 * 1000;
  max_retries_limit constant int := 100;
  max_idempotency_window_ms constant bigint := 30::bigint * 24 * 3600 * 1000;
  default_idempotency_window_ms constant bigint := 24 * 3600 * 1000;
  max_eta_days constant int := 365;
  max_nesting constant int := 32;
  queue_pattern constant text := '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
  known_options constant text[] := ARRAY['queue', 'priority', 'eta', 'countdown', 'timeout', 'max_retries',
                                         'labels', 'request_id', 'idempotency_key', 'idempotency_window'];

  size bigint;
  opt text;
  n numeric;
  v jsonb;
  label record;
  queue_name text := 'default';
  prio smallint := 3;
  due timestamptz;
  tmo_ms bigint := 0;         -- 0: the task's declared timeout, else the deployment default
  retries int := -1;          -- -1: the task's declared budget, else the deployment default
  rid text := '';
  ikey text := '';
  ikey_expires timestamptz;
  window_ms bigint := default_idempotency_window_ms;
  first_state task_state := 'QUEUED';
BEGIN
  -- The name: required, bounded, declared by some worker pool (ever).
  IF name IS NULL OR name = '' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'name', 'must not be empty');
  END IF;
  IF length(name) > max_name_chars THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'name',
                             format('must be at most %s characters, got %s', max_name_chars, length(name)));
  END IF;
  PERFORM 1 FROM task_names d WHERE d.name = ty_submission_of.name;
  IF NOT FOUND THEN
    PERFORM ty_submit_refuse('UNKNOWN_TASK_NAME', path || 'name',
                             format('no worker pool serves a task named %L', left(name, 64)));
  END IF;

  -- The payload: a list and an object, bounded in size and nesting.
  args := coalesce(args, '[]');
  kwargs := coalesce(kwargs, '{}');
  IF jsonb_typeof(args) <> 'array' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'args', 'must be a list in JSON');
  END IF;
  IF jsonb_typeof(kwargs) <> 'object' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'kwargs', 'must be an object in JSON');
  END IF;
  size := octet_length(args::text) + octet_length(kwargs::text);
  IF size > cap THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_LARGE',
                             path || CASE WHEN octet_length(args::text) >= octet_length(kwargs::text)
                                          THEN 'args' ELSE 'kwargs' END,
                             format('payload is %s bytes of JSON (args and kwargs together), over the %s-byte limit',
                                    size, cap));
  END IF;
  -- Brackets counted first: most payloads cannot nest that deep, and are not walked.
  IF length(args::text) - length(translate(args::text, '[{', '')) > max_nesting
     AND ty_json_depth(args, max_nesting) > max_nesting THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_DEEP', path || 'args',
                             format('lists and objects nest more than %s levels deep (the limit)', max_nesting));
  END IF;
  IF length(kwargs::text) - length(translate(kwargs::text, '[{', '')) > max_nesting
     AND ty_json_depth(kwargs, max_nesting) > max_nesting THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_DEEP', path || 'kwargs',
                             format('lists and objects nest more than %s levels deep (the limit)', max_nesting));
  END IF;

  -- The options.
  options := coalesce(options, '{}');
  IF jsonb_typeof(options) <> 'object' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options', 'must be an object in JSON');
  END IF;
  FOR opt IN SELECT k FROM jsonb_object_keys(options) AS k LOOP
    IF NOT opt = ANY(known_options) THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.' || opt,
                               format('unknown option (known: %s)', array_to_string(known_options, ', ')));
    END IF;
  END LOOP;

  queue_name := coalesce(ty_submit_text(options, 'queue', 1000, path), 'default');
  IF queue_name = '' THEN
    queue_name := 'default';
  ELSIF queue_name !~ queue_pattern THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.queue',
      CASE WHEN length(queue_name) > 128 THEN format('must be at most 128 characters, got %s', length(queue_name))
           ELSE format('must be an ASCII letter or digit, then letters, digits, ''.'', ''_'', '':'' or ''-'' '
                       '([A-Za-z0-9][A-Za-z0-9._:-]{0,127}), got %L', left(queue_name, 64)) END);
  END IF;

  v := options -> 'priority';
  IF v IS NOT NULL AND jsonb_typeof(v) <> 'null' THEN
    IF jsonb_typeof(v) = 'number' AND (v #>> '{}') IN ('0', '1', '2', '3', '4') THEN
      prio := CASE WHEN (v #>> '{}') = '0' THEN 3 ELSE (v #>> '{}')::smallint END;
    ELSIF jsonb_typeof(v) = 'string'
          AND lower(regexp_replace(v #>> '{}', '^PRIORITY_', '', 'i')) IN ('critical', 'high', 'normal', 'low') THEN
      prio := CASE lower(regexp_replace(v #>> '{}', '^PRIORITY_', '', 'i'))
                WHEN 'critical' THEN 1 WHEN 'high' THEN 2 WHEN 'normal' THEN 3 ELSE 4 END;
    ELSE
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.priority',
                               format('unknown priority %s (1-4 or critical, high, normal, low)', v::text));
    END IF;
  END IF;

  n := ty_submit_number(options, 'timeout', path);
  IF n IS NOT NULL THEN
    IF round(n * 1000) <= 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.timeout', 'must be positive');
    ELSIF round(n * 1000) > max_timeout_ms THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.timeout', 'must be at most 24h');
    END IF;
    tmo_ms := round(n * 1000)::bigint;
  END IF;

  n := ty_submit_number(options, 'max_retries', path);
  IF n IS NOT NULL THEN
    IF n <> trunc(n) OR n < 0 OR n > max_retries_limit THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.max_retries',
                               format('must be between 0 and %s, got %s', max_retries_limit, n));
    END IF;
    retries := n::int;
  END IF;

  -- When it may first run: eta or countdown, one of them.
  IF options ? 'eta' AND options ? 'countdown' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.countdown',
                             'eta and countdown are exclusive: set one of them');
  END IF;
  opt := ty_submit_text(options, 'eta', 100, path);
  IF opt IS NOT NULL THEN
    BEGIN
      due := opt::timestamptz;
    EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_parameter_value THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.eta', 'malformed timestamp');
    END;
    IF due - accepted > make_interval(days => max_eta_days) THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.eta',
                               format('must be at most %s days ahead', max_eta_days));
    END IF;
  END IF;
  n := ty_submit_number(options, 'countdown', path);
  IF n IS NOT NULL THEN
    IF n < 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.countdown', 'must not be negative');
    ELSIF n > max_eta_days * 86400 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.countdown',
                               format('must be at most %s days ahead', max_eta_days));
    END IF;
    due := accepted + n * interval '1 second';
  END IF;
  IF due > accepted THEN
    first_state := 'SCHEDULED';
  END IF;  -- a time already passed: queued at once, run_at keeps the time asked for

  v := options -> 'labels';
  IF v IS NOT NULL AND jsonb_typeof(v) <> 'null' THEN
    IF jsonb_typeof(v) <> 'object' THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.labels', 'must be an object of strings');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(v)) > max_labels THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.labels',
                               format('at most %s labels, got %s', max_labels,
                                      (SELECT count(*) FROM jsonb_object_keys(v))));
    END IF;
    FOR label IN SELECT e.key, e.value FROM jsonb_each(v) AS e LOOP
      IF jsonb_typeof(label.value) <> 'string' THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || format('options.labels[%s]', to_json(label.key)),
                                 'must be a string');
      ELSIF length(label.key) > max_label_key_chars THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || format('options.labels[%s]', to_json(label.key)),
                                 format('must be at most %s characters, got %s', max_label_key_chars,
                                        length(label.key)));
      ELSIF length(label.value #>> '{}') > max_label_value_chars THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || format('options.labels[%s]', to_json(label.key)),
                                 format('must be at most %s characters, got %s', max_label_value_chars,
                                        length(label.value #>> '{}')));
      END IF;
    END LOOP;
  ELSE
    v := '{}';
  END IF;

  rid := coalesce(ty_submit_text(options, 'request_id', max_request_id_chars, path), '');
  ikey := coalesce(ty_submit_text(options, 'idempotency_key', max_idempotency_key_chars, path), '');
  n := ty_submit_number(options, 'idempotency_window', path);
  IF n IS NOT NULL THEN
    IF ikey = '' THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.idempotency_window',
                               'only meaningful with an idempotency_key');
    ELSIF round(n * 1000) <= 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.idempotency_window', 'must be positive');
    ELSIF round(n * 1000) > max_idempotency_window_ms THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.idempotency_window', 'must be at most 30 days');
    END IF;
    window_ms := round(n * 1000)::bigint;
  END IF;
  IF ikey <> '' THEN
    ikey_expires := accepted + window_ms * interval '1 millisecond';
  END IF;
  RETURN ROW(ty_uuid7(), name, args, kwargs, prio, queue_name, tmo_ms, retries, rid, v, first_state,
             accepted, due, ikey, ikey_expires)::ty_submission;
END
$$;

-- Write checked rows; returns each one's task id, in order. Acceptance is once per
-- request_id (for good) and per idempotency key (for its window), as SubmitTask: a
-- row whose request_id or live key a task holds already (committed, or earlier in
-- this transaction or this batch) writes nothing and gets that task's id. One INSERT
-- for them all, so the statement triggers log their events and NOTIFY once.
CREATE FUNCTION ty_submit_rows(subs ty_submission[]) RETURNS uuid[]
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  keyed boolean := EXISTS (SELECT 1 FROM unnest(subs) s WHERE s.request_id <> '' OR s.idempotency_key <> '');
  ids uuid[];
BEGIN
  -- (Each lookup repeats "<> ''" of the other side: the unique indexes on
  -- request_id and idempotency_key are partial, WHERE ... <> ''.)
  IF keyed THEN
    -- Keys whose window has passed are freed for the new tasks (sql/tasks.sql, expired_keys).
    UPDATE tasks o SET idempotency_key = ''
    WHERE o.idempotency_key <> ''
      AND o.idempotency_key = ANY(ARRAY(SELECT s.idempotency_key FROM unnest(subs) s WHERE s.idempotency_key <> ''))
      AND o.idempotency_expires_at <= now();
  END IF;
  -- A task with no parent is the root of its own tree (core/codec.py). ON CONFLICT:
  -- a duplicate inside the batch, or one another transaction committed meanwhile.
  INSERT INTO tasks AS t (
    id, root_id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
    labels, state, attempt, created_at, updated_at, run_at, idempotency_key, idempotency_expires_at
  )
  SELECT s.id, s.id, s.name, s.args, s.kwargs, s.priority, s.queue, s.timeout_ms, s.max_retries,
         s.request_id, s.labels, s.state, 1, s.created_at, s.created_at, s.run_at, s.idempotency_key,
         s.idempotency_expires_at
  FROM unnest(subs) AS s
  WHERE NOT keyed
     OR (NOT EXISTS (SELECT 1 FROM tasks o
                     WHERE s.request_id <> '' AND o.request_id <> '' AND o.request_id = s.request_id)
         AND NOT EXISTS (SELECT 1 FROM tasks o
                         WHERE s.idempotency_key <> '' AND o.idempotency_key <> ''
                           AND o.idempotency_key = s.idempotency_key))
  ON CONFLICT DO NOTHING;
  IF NOT keyed THEN
    RETURN ARRAY(SELECT s.id FROM unnest(subs) WITH ORDINALITY AS s ORDER BY s.ordinality);
  END IF;
  -- Each row's task: the one holding its request_id, else its live key, else its own.
  -- (Scalar subqueries: an index probe per row, never a scan of every task.)
  SELECT array_agg(coalesce(
           (SELECT r.id FROM tasks r
            WHERE s.request_id <> '' AND r.request_id <> '' AND r.request_id = s.request_id),
           (SELECT k.id FROM tasks k
            WHERE s.idempotency_key <> '' AND k.idempotency_key <> '' AND k.idempotency_key = s.idempotency_key),
           s.id) ORDER BY s.ordinality)
  INTO ids
  FROM unnest(subs) WITH ORDINALITY AS s;
  RETURN ids;
END
$$;

-- Submit one task in the caller's transaction; returns its id (the first task's
-- id again for a request_id or live idempotency key seen before, as SubmitTask).
-- options (all optional): queue, priority (1-4 or critical/high/normal/low),
-- eta (a timestamp) or countdown (seconds), timeout (seconds), max_retries,
-- labels (an object of strings), request_id, idempotency_key,
-- idempotency_window (seconds, default one day).
CREATE FUNCTION taskyard_submit(
  name text, args jsonb DEFAULT '[]', kwargs jsonb DEFAULT '{}', options jsonb DEFAULT '{}'
) RETURNS uuid
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (ty_submit_rows(ARRAY[ty_submission_of(
    name, args, kwargs, options, clock_timestamp(), '',
    (SELECT c.value::bigint FROM taskyard_config c WHERE c.key = 'max_payload_bytes'))]))[1];
END
$$;

-- Submit many tasks in one call: tasks is a JSON list of objects {"name", "args",
-- "kwargs", "options"} (as taskyard_submit's arguments); returns their ids in
-- order. All or nothing: one bad task refuses the call (its fields named
-- tasks[i].x, i from 0). At most 10,000 tasks a call.
CREATE FUNCTION taskyard_submit_many(tasks jsonb) RETURNS uuid[]
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  max_batch constant int := 10000;
  cap bigint := (SELECT c.value::bigint FROM taskyard_config c WHERE c.key = 'max_payload_bytes');
  accepted timestamptz := clock_timestamp();
  subs ty_submission[] := '{}';
  item jsonb;
  i int := 0;
  k text;
BEGIN
  IF tasks IS NULL OR jsonb_typeof(tasks) <> 'array' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'tasks', 'must be a list in JSON');
  END IF;
  IF jsonb_array_length(tasks) > max_batch THEN
    PERFORM ty_submit_refuse('BATCH_TOO_LARGE', 'tasks',
                             format('at most %s tasks per batch, got %s', max_batch, jsonb_array_length(tasks)));
  END IF;
  FOR item IN SELECT e FROM jsonb_array_elements(tasks) AS e LOOP
    IF jsonb_typeof(item) <> 'object' THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('tasks[%s]', i), 'must be an object in JSON');
    END IF;
    FOR k IN SELECT jsonb_object_keys(item) LOOP
      IF NOT k = ANY(ARRAY['name', 'args', 'kwargs', 'options']) THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('tasks[%s].%s', i, k),
                                 'unknown field (known: name, args, kwargs, options)');
      END IF;
    END LOOP;
    IF item ? 'name' AND jsonb_typeof(item -> 'name') <> 'string' THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('tasks[%s].name', i), 'must be a string');
    END IF;
    subs := subs || ty_submission_of(
      item ->> 'name', coalesce(item -> 'args', '[]'), coalesce(item -> 'kwargs', '{}'),
      coalesce(item -> 'options', '{}'), accepted, format('tasks[%s].', i), cap);
    i := i + 1;
  END LOOP;
  IF i = 0 THEN
    RETURN '{}';
  END IF;
  RETURN ty_submit_rows(subs);
END
$$;

-- The store's tables wherever the caller's search_path points: pinned to the
-- schema these migrations write to.
DO $pin$
BEGIN
  EXECUTE format('ALTER FUNCTION taskyard_submit(text, jsonb, jsonb, jsonb) SET search_path = %I',
                 current_schema());
  EXECUTE format('ALTER FUNCTION taskyard_submit_many(jsonb) SET search_path = %I', current_schema());
END
$pin$;

-- A wake-up loads only what is new (result_store/arrivals.py). An application that
-- enqueues in each of its transactions wakes the stores tens of times a second; the
-- scheduler reading every QUEUED row each time would re-read a deep backlog
-- continuously. So the task events of rows inserted by anyone but the store are
-- marked external, and a store reads the final ones after its cursor, in log order,
-- through this partial index (the store's own events, the bulk, are not in it).
ALTER TABLE events ADD COLUMN external boolean;
CREATE INDEX events_external ON events (xid, id) WHERE external;

-- 0016's tasks_log_inserted, marking the events of an insert made outside the store
-- (taskyard.origin is 'store' on the store's connections; NULL, not false, keeps the
-- store's rows out of the index).
CREATE OR REPLACE FUNCTION tasks_log_inserted() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  external boolean := CASE WHEN coalesce(current_setting('taskyard.origin', true), '') <> 'store'
                           THEN true END;
BEGIN
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id, external)
  SELECT 1, ty_state_event(e.state), n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(e.state), n.attempt, n.priority,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(n.worker_id, '') END,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(substring(n.worker_id FROM '^(.*)/w'), '') END,
         external
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
