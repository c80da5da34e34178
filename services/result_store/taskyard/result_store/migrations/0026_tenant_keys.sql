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

-- A key weight is its tenant's own too: keys are stored qualified as names are,
-- and the default tenant's key "acme/k1" is not acme's "k1". One statement: run
-- again, it drops and adds the same key.
ALTER TABLE flow_weights DROP CONSTRAINT flow_weights_pkey, ADD PRIMARY KEY (key, tenant);
