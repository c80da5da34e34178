-- taskyard: no-transaction
-- A request id and an idempotency key are a tenant's own: two tasks may hold the
-- same one if they are of different tenants. A tenant's keys are stored qualified
-- (tenant/key, writes/insert_checks.py) and the default tenant's bare, and a default
-- tenant's key may hold a '/': so the default tenant's "acme/r1" and acme's "r1" are
-- the same text, and only the tenant column tells them apart. The unique indexes
-- are per (key, tenant), the key first, so a lookup by the keys alone
-- (lookup_duplicates, expired_keys) still reads them; every comparison also
-- compares the tenant. Built CONCURRENTLY, outside a transaction (migrate.py), as
-- 0027's are: tasks takes writes while they build. Each statement is safe to run
-- again after a crash; while both indexes of a key exist the stricter one holds.

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tasks_request_id_tenant_key
  ON tasks (request_id, tenant) WHERE request_id <> '';
DROP INDEX CONCURRENTLY IF EXISTS tasks_request_id_key;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tasks_idempotency_key_tenant_key
  ON tasks (idempotency_key, tenant) WHERE idempotency_key <> '';
DROP INDEX CONCURRENTLY IF EXISTS tasks_idempotency_key;

-- 0025's ty_submit_rows for a tenant: a held request id or live key is the same
-- tenant's only (the one-argument call is this one for the default tenant).
CREATE OR REPLACE FUNCTION ty_submit_rows(subs ty_submission[], tenant text) RETURNS uuid[]
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

-- A key weight is its tenant's own too: keys are stored qualified as names are,
-- and the default tenant's key "acme/k1" is not acme's "k1". One statement: run
-- again, it drops and adds the same key.
ALTER TABLE flow_weights DROP CONSTRAINT flow_weights_pkey, ADD PRIMARY KEY (key, tenant);

-- CREATE OR REPLACE above dropped the search_path 0025 pinned on ty_submit_rows for a
-- tenant (a SECURITY DEFINER caller's path must find the store's tables first): pin it again.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION ty_submit_rows(ty_submission[], text) SET search_path = %I, pg_temp',
                 current_schema());
END
$$;
