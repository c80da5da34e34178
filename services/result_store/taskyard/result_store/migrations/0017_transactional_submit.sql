-- Taskyard schema: transactional enqueue (docs/transactional-enqueue.md).
--
-- taskyard_submit(name, args, kwargs, options) writes the task row the store
-- would have written for the same SubmitTask, inside the caller's own
-- transaction on the same database: the task exists exactly when that
-- transaction commits. The statement triggers on tasks do the rest, as for any
-- row written outside the store: tasks_log_inserted logs its task.queued (or
-- task.scheduled) event, and tasks_notify_insert NOTIFYs the channel the stores
-- LISTEN on, delivered at COMMIT; PostgreSQL folds the identical notifications
-- of one transaction into one, so 10,000 calls wake the scheduler once, and its
-- reload pages through every QUEUED row.
--
-- The function checks what the gateway checks (core/validation.py, core/names.py,
-- core/payload.py: the constants below must equal those; a test compares them)
-- and refuses a bad call with SQLSTATE 22023 (invalid_parameter_value): the
-- message is "REASON: field: description", DETAIL is the reason code alone
-- (UNKNOWN_TASK_NAME, PAYLOAD_TOO_LARGE, PAYLOAD_TOO_DEEP or INVALID_ARGUMENT,
-- the gateway's ErrorInfo reasons) and HINT the field. The error aborts the
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

-- A string option, or NULL when absent (JSON null counts as absent).
CREATE FUNCTION ty_submit_text(options jsonb, key text, most int) RETURNS text
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v jsonb := options -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(v) <> 'string' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.' || key, 'must be a string');
  END IF;
  IF length(v #>> '{}') > most THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.' || key,
                             format('must be at most %s characters, got %s', most, length(v #>> '{}')));
  END IF;
  RETURN v #>> '{}';
END
$$;

-- A number option, or NULL when absent.
CREATE FUNCTION ty_submit_number(options jsonb, key text) RETURNS numeric
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v jsonb := options -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(v) <> 'number' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.' || key, 'must be a number');
  END IF;
  RETURN (v #>> '{}')::numeric;
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

  accepted timestamptz := clock_timestamp();
  cap bigint;
  size bigint;
  opt text;
  n numeric;
  v jsonb;
  label record;
  queue_name text := 'default';
  prio smallint := 3;
  due timestamptz;
  tmo_ms bigint := 0;     -- 0: the task's declared timeout, else the deployment default
  retries int := -1;          -- -1: the task's declared budget, else the deployment default
  rid text := '';
  ikey text := '';
  ikey_expires timestamptz;
  window_ms bigint := default_idempotency_window_ms;
  first_state task_state := 'QUEUED';
  new_id uuid := ty_uuid7();
  found_id uuid;
BEGIN
  -- The name: required, bounded, declared by some worker pool (ever).
  IF name IS NULL OR name = '' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'name', 'must not be empty');
  END IF;
  IF length(name) > max_name_chars THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'name',
                             format('must be at most %s characters, got %s', max_name_chars, length(name)));
  END IF;
  PERFORM 1 FROM task_names d WHERE d.name = taskyard_submit.name;
  IF NOT FOUND THEN
    PERFORM ty_submit_refuse('UNKNOWN_TASK_NAME', 'name',
                             format('no worker pool serves a task named %L', left(name, 64)));
  END IF;

  -- The payload: a list and an object, bounded in size and nesting.
  args := coalesce(args, '[]');
  kwargs := coalesce(kwargs, '{}');
  IF jsonb_typeof(args) <> 'array' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'args', 'must be a list in JSON');
  END IF;
  IF jsonb_typeof(kwargs) <> 'object' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'kwargs', 'must be an object in JSON');
  END IF;
  SELECT c.value::bigint INTO cap FROM taskyard_config c WHERE c.key = 'max_payload_bytes';
  size := octet_length(args::text) + octet_length(kwargs::text);
  IF size > coalesce(cap, 262144) THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_LARGE',
                             CASE WHEN octet_length(args::text) >= octet_length(kwargs::text)
                                  THEN 'args' ELSE 'kwargs' END,
                             format('payload is %s bytes of JSON (args and kwargs together), over the %s-byte limit',
                                    size, coalesce(cap, 262144)));
  END IF;
  -- Brackets counted first: most payloads cannot nest that deep, and are not walked.
  IF length(args::text) - length(translate(args::text, '[{', '')) > max_nesting
     AND ty_json_depth(args, max_nesting) > max_nesting THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_DEEP', 'args',
                             format('lists and objects nest more than %s levels deep (the limit)', max_nesting));
  END IF;
  IF length(kwargs::text) - length(translate(kwargs::text, '[{', '')) > max_nesting
     AND ty_json_depth(kwargs, max_nesting) > max_nesting THEN
    PERFORM ty_submit_refuse('PAYLOAD_TOO_DEEP', 'kwargs',
                             format('lists and objects nest more than %s levels deep (the limit)', max_nesting));
  END IF;

  -- The options.
  options := coalesce(options, '{}');
  IF jsonb_typeof(options) <> 'object' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options', 'must be an object in JSON');
  END IF;
  FOR opt IN SELECT k FROM jsonb_object_keys(options) AS k LOOP
    IF NOT opt = ANY(known_options) THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.' || opt,
                               format('unknown option (known: %s)', array_to_string(known_options, ', ')));
    END IF;
  END LOOP;

  queue_name := coalesce(ty_submit_text(options, 'queue', 1000), 'default');
  IF queue_name = '' THEN
    queue_name := 'default';
  ELSIF queue_name !~ queue_pattern THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.queue',
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
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.priority',
                               format('unknown priority %s (1-4 or critical, high, normal, low)', v::text));
    END IF;
  END IF;

  n := ty_submit_number(options, 'timeout');
  IF n IS NOT NULL THEN
    IF round(n * 1000) <= 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.timeout', 'must be positive');
    ELSIF round(n * 1000) > max_timeout_ms THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.timeout', 'must be at most 24h');
    END IF;
    tmo_ms := round(n * 1000)::bigint;
  END IF;

  n := ty_submit_number(options, 'max_retries');
  IF n IS NOT NULL THEN
    IF n <> trunc(n) OR n < 0 OR n > max_retries_limit THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.max_retries',
                               format('must be between 0 and %s, got %s', max_retries_limit, n));
    END IF;
    retries := n::int;
  END IF;

  -- When it may first run: eta or countdown, one of them.
  IF options ? 'eta' AND options ? 'countdown' THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.countdown',
                             'eta and countdown are exclusive: set one of them');
  END IF;
  opt := ty_submit_text(options, 'eta', 100);
  IF opt IS NOT NULL THEN
    BEGIN
      due := opt::timestamptz;
    EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_parameter_value THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.eta', 'malformed timestamp');
    END;
    IF due - accepted > make_interval(days => max_eta_days) THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.eta',
                               format('must be at most %s days ahead', max_eta_days));
    END IF;
  END IF;
  n := ty_submit_number(options, 'countdown');
  IF n IS NOT NULL THEN
    IF n < 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.countdown', 'must not be negative');
    ELSIF n > max_eta_days * 86400 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.countdown',
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
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.labels', 'must be an object of strings');
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(v)) > max_labels THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.labels',
                               format('at most %s labels, got %s', max_labels,
                                      (SELECT count(*) FROM jsonb_object_keys(v))));
    END IF;
    FOR label IN SELECT e.key, e.value FROM jsonb_each(v) AS e LOOP
      IF jsonb_typeof(label.value) <> 'string' THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('options.labels[%s]', to_json(label.key)),
                                 'must be a string');
      ELSIF length(label.key) > max_label_key_chars THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('options.labels[%s]', to_json(label.key)),
                                 format('must be at most %s characters, got %s', max_label_key_chars,
                                        length(label.key)));
      ELSIF length(label.value #>> '{}') > max_label_value_chars THEN
        PERFORM ty_submit_refuse('INVALID_ARGUMENT', format('options.labels[%s]', to_json(label.key)),
                                 format('must be at most %s characters, got %s', max_label_value_chars,
                                        length(label.value #>> '{}')));
      END IF;
    END LOOP;
  ELSE
    v := '{}';
  END IF;

  -- Acceptance is once per request_id (for good) and per idempotency key (for
  -- its window): a repeated call returns the first task's id.
  rid := coalesce(ty_submit_text(options, 'request_id', max_request_id_chars), '');
  ikey := coalesce(ty_submit_text(options, 'idempotency_key', max_idempotency_key_chars), '');
  n := ty_submit_number(options, 'idempotency_window');
  IF n IS NOT NULL THEN
    IF ikey = '' THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.idempotency_window',
                               'only meaningful with an idempotency_key');
    ELSIF round(n * 1000) <= 0 THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.idempotency_window', 'must be positive');
    ELSIF round(n * 1000) > max_idempotency_window_ms THEN
      PERFORM ty_submit_refuse('INVALID_ARGUMENT', 'options.idempotency_window', 'must be at most 30 days');
    END IF;
    window_ms := round(n * 1000)::bigint;
  END IF;
  IF rid <> '' THEN
    SELECT t.id INTO found_id FROM tasks t WHERE t.request_id = rid;
    IF found_id IS NOT NULL THEN
      RETURN found_id;
    END IF;
  END IF;
  IF ikey <> '' THEN
    ikey_expires := accepted + window_ms * interval '1 millisecond';
    -- A key whose window has passed is freed for the new task (sql/tasks.sql, expired_keys).
    UPDATE tasks o SET idempotency_key = ''
    WHERE o.idempotency_key = ikey AND o.idempotency_expires_at <= now();
    SELECT t.id INTO found_id FROM tasks t WHERE t.idempotency_key = ikey;
    IF found_id IS NOT NULL THEN
      RETURN found_id;
    END IF;
  END IF;

  -- A task with no parent is the root of its own tree (core/codec.py).
  INSERT INTO tasks AS t (
    id, root_id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
    labels, state, attempt, created_at, updated_at, run_at, idempotency_key, idempotency_expires_at
  ) VALUES (
    new_id, new_id, taskyard_submit.name, args, kwargs, prio, queue_name, tmo_ms, retries,
    rid, v, first_state, 1, accepted, accepted, due, ikey, ikey_expires
  )
  ON CONFLICT DO NOTHING
  RETURNING t.id INTO found_id;
  IF found_id IS NULL THEN
    -- Another transaction took the request_id or key meanwhile and committed.
    SELECT t.id INTO found_id FROM tasks t
    WHERE (rid <> '' AND t.request_id = rid)
       OR (ikey <> '' AND t.idempotency_key = ikey);
    IF found_id IS NULL THEN
      RAISE EXCEPTION 'taskyard_submit: the task could not be written (a concurrent duplicate not visible here)'
        USING ERRCODE = 'serialization_failure';
    END IF;
  END IF;
  RETURN found_id;
END
$$;

-- The store's tables wherever the caller's search_path points: pinned to the
-- schema these migrations write to.
DO $pin$
BEGIN
  EXECUTE format('ALTER FUNCTION taskyard_submit(text, jsonb, jsonb, jsonb) SET search_path = %I',
                 current_schema());
END
$pin$;
