-- Taskyard schema: tenants (docs/tenants.md). A tenant is a row here; "" is the
-- default tenant, which has no row and is never suspended: everything stored
-- before tenants is the default tenant's, and stays so (ADD COLUMN ... DEFAULT ''
-- rewrites no table). Names of queues, schedules and limits are stored qualified,
-- "tenant/name" (core/tenants.py), so two tenants' names never meet; the tenant
-- column is what every read and write a caller triggers filters on
-- (TenantScope: "(all OR tenant = t)").

-- state: taskyard.v1.TenantState's number (ACTIVE 1, SUSPENDED 2). quota: the
-- serialized taskyard.v1.TenantQuota (empty: no bound), written and read by
-- result_store/tenants.py only.
CREATE TABLE tenants (
  name          text PRIMARY KEY CHECK (name ~ '^[a-z0-9-]{1,64}$'),
  state         smallint NOT NULL DEFAULT 1 CHECK (state IN (1, 2)),
  quota         bytea NOT NULL DEFAULT '',
  weight        integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000),
  description   text NOT NULL DEFAULT '' CHECK (length(description) <= 1024),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  suspended_at  timestamptz
);

-- Bumped by every change of tenants, in its transaction: the gateways' and the
-- scheduler's caches poll it (STORE_TENANTS with known_version), one row read.
-- Every change locks this row first, so changes are serialized and the cap
-- (10,000 tenants) is counted under the lock.
CREATE TABLE tenant_version (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  version  bigint NOT NULL
);
INSERT INTO tenant_version (version) VALUES (0);

ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE schedules ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE flow_limits ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE flow_weights ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE queues ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE redrives ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN tenant text NOT NULL DEFAULT '';

-- The tenants' indexes on tasks are 0027_tenant_indexes.sql's, built without
-- holding this migration's lock on tasks.

-- 0017's tasks_log_inserted and 0016's tasks_log_changed: a task's events carry its tenant.
CREATE OR REPLACE FUNCTION tasks_log_inserted() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  external boolean := CASE WHEN coalesce(current_setting('taskyard.origin', true), '') <> 'store'
                           THEN true END;
BEGIN
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id, external, tenant)
  SELECT 1, ty_state_event(e.state), n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(e.state), n.attempt, n.priority,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(n.worker_id, '') END,
         CASE WHEN e.state = 'ASSIGNED' THEN nullif(substring(n.worker_id FROM '^(.*)/w'), '') END,
         external, n.tenant
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

CREATE OR REPLACE FUNCTION tasks_log_changed() RETURNS trigger
  LANGUAGE plpgsql SET enable_nestloop = off AS $$
BEGIN
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id, attributes, tenant)
  SELECT 1, ty_state_event(n.state), n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(n.state), n.attempt, n.priority,
         nullif(n.worker_id, ''), nullif(substring(n.worker_id FROM '^(.*)/w'), ''),
         CASE WHEN n.state IN ('FAILURE', 'RETRYING') AND coalesce(n.failure_type, '') <> ''
              THEN jsonb_build_object('failure_type', n.failure_type) END,
         n.tenant
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE o.state <> n.state;
  RETURN NULL;
END
$$;

-- Transactional enqueue for a tenant. The four-argument taskyard_submit and the
-- one-argument taskyard_submit_many stay as they were (the default tenant; the
-- grants an operator gave them are kept); the calls with a last argument, tenant,
-- submit into that tenant: its queue names are qualified as the gateway qualifies
-- them, and an unknown or suspended tenant is refused (TENANT_UNKNOWN,
-- TENANT_SUSPENDED) as the gateway and the store refuse it. The database role is
-- trusted as an operator token is: it names the tenant (docs/tenants.md).

-- 0017's ty_submit_rows, for one tenant: the rows' queues, request ids and keys
-- qualified, the tenant stored. The one-argument call is this one for the default tenant.
-- A held request id or live key is the same tenant's only (0026's unique indexes).
CREATE FUNCTION ty_submit_rows(subs ty_submission[], tenant text) RETURNS uuid[]
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  keyed boolean := EXISTS (SELECT 1 FROM unnest(subs) s WHERE s.request_id <> '' OR s.idempotency_key <> '');
  held smallint;
  ids uuid[];
BEGIN
  tenant := coalesce(tenant, '');
  IF tenant <> '' THEN
    IF tenant !~ '^[a-z0-9-]{1,64}$' THEN
      PERFORM ty_submit_refuse('INVALID_TENANT', 'tenant',
        CASE WHEN length(tenant) > 64 THEN format('must be at most 64 characters, got %s', length(tenant))
             ELSE format('must be 1 to 64 characters of [a-z0-9-], got %L', left(tenant, 64)) END);
    END IF;
    -- Share-locked to COMMIT: a suspension waits for this submission, and no
    -- submission follows a suspension that has returned.
    SELECT t.state INTO held FROM tenants t WHERE t.name = ty_submit_rows.tenant FOR SHARE;
    IF NOT FOUND THEN
      PERFORM ty_submit_refuse('TENANT_UNKNOWN', 'tenant',
                               format('no tenant named %L; an operator creates it with '
                                      'TenantService.CreateTenant', tenant));
    ELSIF held = 2 THEN
      PERFORM ty_submit_refuse('TENANT_SUSPENDED', 'tenant',
                               format('tenant %L is suspended: it takes no new tasks until it is resumed',
                                      tenant));
    END IF;
    -- Its queue, request id and idempotency key as the store keeps a tenant's:
    -- qualified (core/tenants.py, writes/insert_checks.py).
    subs := ARRAY(
      SELECT ROW(s.id, s.name, s.args, s.kwargs, s.priority, tenant || '/' || s.queue, s.timeout_ms,
                 s.max_retries, CASE WHEN s.request_id <> '' THEN tenant || '/' || s.request_id ELSE '' END,
                 s.labels, s.state, s.created_at, s.run_at,
                 CASE WHEN s.idempotency_key <> '' THEN tenant || '/' || s.idempotency_key ELSE '' END,
                 s.idempotency_expires_at)::ty_submission
      FROM unnest(subs) WITH ORDINALITY AS s
      ORDER BY s.ordinality);
  END IF;
  IF keyed THEN
    UPDATE tasks o SET idempotency_key = ''
    WHERE o.idempotency_key <> ''
      AND o.idempotency_key = ANY(ARRAY(SELECT s.idempotency_key FROM unnest(subs) s WHERE s.idempotency_key <> ''))
      AND o.tenant = ty_submit_rows.tenant
      AND o.idempotency_expires_at <= now();
  END IF;
  INSERT INTO tasks AS t (
    id, root_id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
    labels, state, attempt, created_at, updated_at, run_at, idempotency_key, idempotency_expires_at, tenant
  )
  SELECT s.id, s.id, s.name, s.args, s.kwargs, s.priority, s.queue, s.timeout_ms, s.max_retries,
         s.request_id, s.labels, s.state, 1, s.created_at, s.created_at, s.run_at, s.idempotency_key,
         s.idempotency_expires_at, tenant
  FROM unnest(subs) AS s
  WHERE NOT keyed
     OR (NOT EXISTS (SELECT 1 FROM tasks o
                     WHERE s.request_id <> '' AND o.request_id <> '' AND o.request_id = s.request_id
                       AND o.tenant = ty_submit_rows.tenant)
         AND NOT EXISTS (SELECT 1 FROM tasks o
                         WHERE s.idempotency_key <> '' AND o.idempotency_key <> ''
                           AND o.idempotency_key = s.idempotency_key AND o.tenant = ty_submit_rows.tenant))
  ON CONFLICT DO NOTHING;
  IF NOT keyed THEN
    RETURN ARRAY(SELECT s.id FROM unnest(subs) WITH ORDINALITY AS s ORDER BY s.ordinality);
  END IF;
  SELECT array_agg(coalesce(
           (SELECT r.id FROM tasks r
            WHERE s.request_id <> '' AND r.request_id <> '' AND r.request_id = s.request_id
              AND r.tenant = ty_submit_rows.tenant),
           (SELECT k.id FROM tasks k
            WHERE s.idempotency_key <> '' AND k.idempotency_key <> '' AND k.idempotency_key = s.idempotency_key
              AND k.tenant = ty_submit_rows.tenant),
           s.id) ORDER BY s.ordinality)
  INTO ids
  FROM unnest(subs) WITH ORDINALITY AS s;
  RETURN ids;
END
$$;

CREATE OR REPLACE FUNCTION ty_submit_rows(subs ty_submission[]) RETURNS uuid[]
  LANGUAGE sql VOLATILE AS $$
  SELECT ty_submit_rows(subs, ''::text)
$$;

CREATE FUNCTION taskyard_submit(
  name text, args jsonb, kwargs jsonb, options jsonb, tenant text
) RETURNS uuid
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (ty_submit_rows(ARRAY[ty_submission_of(
    name, args, kwargs, options, clock_timestamp(), '',
    (SELECT c.value::bigint FROM taskyard_config c WHERE c.key = 'max_payload_bytes'))], tenant))[1];
END
$$;

CREATE FUNCTION taskyard_submit_many(tasks jsonb, tenant text) RETURNS uuid[]
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
  RETURN ty_submit_rows(subs, tenant);
END
$$;

-- 0023's privileges model for the new calls: run with their owner's rights, names
-- found in the store's schema then pg_temp, nobody may call them but whom the
-- operator grants. A role granted the default tenant's calls is granted these:
-- an application that could submit could already do so as the operator it is
-- trusted as (docs/tenants.md).
DO $privileges$
DECLARE
  public_calls constant text[] := ARRAY[
    'taskyard_submit(text, jsonb, jsonb, jsonb, text)',
    'taskyard_submit_many(jsonb, text)'
  ];
  old_calls constant text[] := ARRAY[
    'taskyard_submit(text, jsonb, jsonb, jsonb)',
    'taskyard_submit_many(jsonb)'
  ];
  fn text;
  grantee text;
  i int;
BEGIN
  FOREACH fn IN ARRAY public_calls || ARRAY['ty_submit_rows(ty_submission[], text)',
                                            'ty_submit_rows(ty_submission[])'] LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', fn, current_schema());
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
  END LOOP;
  FOR i IN 1 .. array_length(public_calls, 1) LOOP
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', public_calls[i]);
    FOR grantee IN
      SELECT DISTINCT a.grantee::regrole::text
      FROM pg_proc p, aclexplode(p.proacl) a
      WHERE p.oid = old_calls[i]::regprocedure AND a.privilege_type = 'EXECUTE'
        AND a.grantee <> 0 AND a.grantee <> p.proowner
    LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', public_calls[i], grantee);
    END LOOP;
  END LOOP;
END
$privileges$;
