-- Taskyard schema: what an application may do through taskyard_submit, and no more
-- (docs/transactional-enqueue.md, "Permissions").
--
-- taskyard_submit and taskyard_submit_many run with their owner's rights (the role
-- that runs the store's migrations), so an application role needs EXECUTE on them
-- and nothing on the tables: it cannot write a task the checks would refuse, rewrite
-- a task, or forge an event. Nobody else may call them (EXECUTE is revoked from
-- PUBLIC, granted by the operator), nor the helpers they call, which trust their
-- arguments.
--
-- Every one of these functions finds names in the store's schema, then pg_temp:
-- a caller's temporary table (pg_temp.task_names, say) never comes first. pg_catalog
-- is searched before both, as it is not in the list.
--
-- An ETA is taken only as RFC 3339 with Z or an offset (ty_submit_eta): PostgreSQL's
-- own input would take 'now', 'epoch', 'tomorrow' and 'infinity', and read a time
-- without a zone in the session's TimeZone.

-- The ETA of a call, checked: RFC 3339 with an explicit offset (hours 00-23,
-- minutes and seconds 00-59, a leap second 60, any fraction), then a date that
-- exists. Any data exception of the cast is the field's INVALID_ARGUMENT, never a
-- bare SQLSTATE of the cast's own.
CREATE FUNCTION ty_submit_eta(eta text, path text) RETURNS timestamptz
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF eta !~ ('^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)([.][0-9]+)?'
             '([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$') THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.eta',
                             format('must be an RFC 3339 timestamp with Z or an offset '
                                    '(2030-01-01T09:00:00Z, 2030-01-01T10:00:00+01:00), got %L', left(eta, 64)));
  END IF;
  BEGIN
    RETURN eta::timestamptz;
  EXCEPTION WHEN data_exception THEN
    PERFORM ty_submit_refuse('INVALID_ARGUMENT', path || 'options.eta',
                             format('not a valid time: %L (%s)', left(eta, 64), SQLERRM));
  END;
  RETURN NULL;  -- not reached: ty_submit_refuse raises
END
$$;

-- 0017's string options, an eta checked as above: ty_submission_of reads its eta
-- through here before it casts it, so that cast only ever sees a checked time, and
-- the checks keep their order.
CREATE OR REPLACE FUNCTION ty_submit_text(options jsonb, key text, most int, path text) RETURNS text
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
  IF key = 'eta' THEN
    PERFORM ty_submit_eta(v #>> '{}', path);
  END IF;
  RETURN v #>> '{}';
END
$$;

DO $privileges$
DECLARE
  -- The public calls, then every helper they reach.
  public_calls constant text[] := ARRAY[
    'taskyard_submit(text, jsonb, jsonb, jsonb)',
    'taskyard_submit_many(jsonb)'
  ];
  helpers constant text[] := ARRAY[
    'ty_submission_of(text, jsonb, jsonb, jsonb, timestamptz, text, bigint)',
    'ty_submit_eta(text, text)',
    'ty_submit_rows(ty_submission[])',
    'ty_submit_refuse(text, text, text)',
    'ty_submit_text(jsonb, text, int, text)',
    'ty_submit_number(jsonb, text, text)',
    'ty_json_depth(jsonb, int)',
    'ty_uuid7()'
  ];
  fn text;
BEGIN
  FOREACH fn IN ARRAY public_calls || helpers LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', fn, current_schema());
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
  END LOOP;
  -- The triggers tell the store's inserts from everyone else's by the session's
  -- taskyard.origin (tasks_notify_insert, tasks_log_inserted), not by the role, which
  -- is the owner's in here: a submitted task still NOTIFYs the stores and is logged
  -- external.
  FOREACH fn IN ARRAY public_calls LOOP
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', fn);
  END LOOP;
END
$privileges$;
