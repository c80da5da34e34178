-- Tenants (migrations/0025_tenants.sql; result_store/tenants.py). Every change
-- locks tenant_version first (lock_tenant_version), so changes are serialized
-- and the cap is counted under that lock.

-- name: tenant_row
-- The columns of a Tenant (tenants.tenant_of reads them; nothing else does).
t.name, t.state, t.quota, t.weight, t.description, ty_us(t.created_at) AS created_us,
ty_us(t.updated_at) AS updated_us, ty_us(t.suspended_at) AS suspended_us

-- name: tenant_version
-- What the caches poll (STORE_TENANTS): one row, no other read while unchanged.
SELECT v.version FROM tenant_version v

-- name: lock_tenant_version
SELECT v.version FROM tenant_version v FOR UPDATE

-- name: bump_tenant_version
UPDATE tenant_version v SET version = v.version + 1 RETURNING v.version

-- name: read_tenants
-- By name after :after; :names NULL for every one; :limit NULL for no bound.
SELECT {{tenant_row}}
FROM tenants t
WHERE (:names::text[] IS NULL OR t.name = ANY(:names::text[])) AND t.name > :after::text
ORDER BY t.name
LIMIT :limit::bigint

-- name: count_tenants
SELECT count(*) FROM tenants t

-- name: insert_tenant
-- A name already taken returns no row (ALREADY_EXISTS).
INSERT INTO tenants AS t (name, quota, weight, description)
VALUES (:name::text, :quota::bytea, :weight::int, :description::text)
ON CONFLICT (name) DO NOTHING
RETURNING {{tenant_row}}

-- name: update_tenant
UPDATE tenants t SET quota = :quota::bytea, weight = :weight::int, description = :description::text,
                     updated_at = now()
WHERE t.name = :name::text
RETURNING {{tenant_row}}

-- name: set_tenant_state
-- Suspend (:state 2) or resume (1); a tenant already so is returned unchanged
-- (changed false: no event, no new version).
WITH old AS (SELECT o.name, o.state FROM tenants o WHERE o.name = :name::text FOR UPDATE),
upd AS (
  UPDATE tenants t
  SET state = :state::smallint, updated_at = now(),
      suspended_at = CASE WHEN :state::smallint = 2 THEN now() END
  FROM old
  WHERE t.name = old.name AND old.state <> :state::smallint
  RETURNING {{tenant_row}}
)
SELECT u.*, true AS changed FROM upd u
UNION ALL
SELECT {{tenant_row}}, false AS changed
FROM tenants t JOIN old ON old.name = t.name
WHERE old.state = :state::smallint

-- name: tenant_states
-- The insert's check (writes/inserts.py): the named tenants' states, share-locked
-- to COMMIT, so a suspension waits for the inserts that passed and no insert
-- follows a suspension that has returned.
SELECT t.name, t.state FROM tenants t WHERE t.name = ANY(:names::text[]) ORDER BY t.name FOR SHARE
