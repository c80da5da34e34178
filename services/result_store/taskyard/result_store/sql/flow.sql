-- Flow control (migrations/0015_flow.sql; result_store/limits.py): named
-- limits, fairness weights, their version, and the leased attempts that use
-- limits. Every change locks flow_version first (lock_flow_version), so changes
-- are serialized and the caps are counted under that lock.

-- name: flow_version
-- What the scheduler polls (STORE_LIMITS): one row, no other read while unchanged.
SELECT v.version FROM flow_version v

-- name: lock_flow_version
SELECT v.version FROM flow_version v FOR UPDATE

-- name: bump_flow_version
UPDATE flow_version v SET version = v.version + 1 RETURNING v.version

-- name: list_limits
-- The scope's tenant's (scopes.py); the scheduler reads every tenant's.
SELECT l.name, l.spec, l.declared, ty_us(l.created_at) AS created_us, ty_us(l.updated_at) AS updated_us
FROM flow_limits l
WHERE :all_tenants::boolean OR l.tenant = :tenant::text
ORDER BY l.name

-- name: list_weights
-- With the tenant whose weight it is: a key is its tenant's own (0026_tenant_keys.sql).
SELECT w.key, w.weight, w.tenant FROM flow_weights w WHERE :all_tenants::boolean OR w.tenant = :tenant::text
ORDER BY w.key, w.tenant

-- name: count_limits
-- The limits of :owner: each tenant keeps its own MAX_LIMITS.
SELECT count(*) FROM flow_limits l WHERE l.tenant = :owner::text

-- name: lookup_limits
SELECT l.name, l.spec, l.declared FROM flow_limits l
WHERE l.name = ANY(:names::text[]) AND (:all_tenants::boolean OR l.tenant = :tenant::text)

-- name: insert_limit
-- A name already taken returns no row (ALREADY_EXISTS).
INSERT INTO flow_limits AS l (name, spec, tenant) VALUES (:name::text, :spec::bytea, :owner::text)
ON CONFLICT (name) DO NOTHING
RETURNING l.name, l.spec, l.declared, ty_us(l.created_at) AS created_us, ty_us(l.updated_at) AS updated_us

-- name: update_limit
-- A user's change: the limit is the user's from then on (a pool's declaration
-- no longer rewrites it).
UPDATE flow_limits l SET spec = :spec::bytea, declared = false, updated_at = now()
WHERE l.name = :name::text AND (:all_tenants::boolean OR l.tenant = :tenant::text)
RETURNING l.name, l.spec, l.declared, ty_us(l.created_at) AS created_us, ty_us(l.updated_at) AS updated_us

-- name: delete_limit
DELETE FROM flow_limits l
WHERE l.name = :name::text AND (:all_tenants::boolean OR l.tenant = :tenant::text)
RETURNING l.name

-- name: limit_users
-- Tasks not final that use limit :name (tasks_limit_names_idx: the same predicate),
-- and schedules whose task template does (schedules.task, a TaskSpec as JSON:
-- {"limits": [{"limit": name, ...}, ...]}): every run of one would store its task
-- with a limit that no longer exists. Schedules are few and a delete rare: a scan.
SELECT
  (SELECT count(*) FROM tasks t
   WHERE t.limit_names @> ARRAY[:name::text] AND t.limit_names IS NOT NULL
     AND t.state NOT IN ('SUCCESS', 'FAILURE', 'CANCELLED')) AS tasks,
  (SELECT count(*) FROM schedules s
   WHERE s.task @> jsonb_build_object('limits', jsonb_build_array(jsonb_build_object('limit', :name::text))))
    AS schedules

-- name: declare_limits
-- A pool's declared limits, upserted by name; one that is stored as it is
-- already is left alone (no row back). limits.py refuses the request before
-- this when a user's limit holds one of the names.
INSERT INTO flow_limits AS l (name, spec, declared)
SELECT d.name, d.spec, true
FROM unnest(:names::text[], :specs::bytea[]) AS d(name, spec)
ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec, updated_at = now()
WHERE l.declared AND l.spec <> EXCLUDED.spec
RETURNING l.name

-- name: weights_held
-- How many weights :owner has, and whether its :key has one: each tenant keeps
-- its own MAX_WEIGHTS.
SELECT count(*) AS n, coalesce(bool_or(w.key = :key::text), false) AS held
FROM flow_weights w WHERE w.tenant = :owner::text

-- name: set_weight
-- No row back when the key already has this weight.
INSERT INTO flow_weights AS w (key, weight, tenant) VALUES (:key::text, :weight::int, :owner::text)
ON CONFLICT (key, tenant) DO UPDATE SET weight = EXCLUDED.weight
WHERE w.weight <> EXCLUDED.weight
RETURNING w.key

-- name: delete_weight
DELETE FROM flow_weights w WHERE w.key = :key::text AND w.tenant = :owner::text RETURNING w.key

-- name: leased_flow
-- ASSIGNED and RUNNING attempts that use limits, by id after :after_id
-- (tasks_leased_flow_idx).
SELECT t.id::text AS id, t.attempt, t.lease_token, t.flow, t.tenant
FROM tasks t
WHERE t.state IN ('ASSIGNED', 'RUNNING') AND t.limit_names IS NOT NULL
  AND t.id > :after_id::uuid
ORDER BY t.id
LIMIT :limit::int

-- name: leased_flow_tenants
-- The same, and the attempts of the tenants :tenants (those with a concurrency
-- quota: the scheduler counts what they hold) whether they use limits or not.
-- Two arms, each read from its own index (tasks_leased_flow_idx and
-- 0027's tasks_leased_tenant_idx): one OR over both, ordered by id, is read
-- through tasks_pkey past every finished row of the tenants; so is the second
-- arm alone, ordered by id and limited (the planner takes a tenant's rows for
-- leased ones), so it is sorted with the first: it holds no more than the
-- quotas' tenants' leased attempts. (A quota is a tenant's: the default
-- tenant, '', is never one of :tenants.)
SELECT leased.id::text AS id, leased.attempt, leased.lease_token, leased.flow, leased.tenant
FROM (
  (SELECT t.id, t.attempt, t.lease_token, t.flow, t.tenant
   FROM tasks t
   WHERE t.state IN ('ASSIGNED', 'RUNNING') AND t.limit_names IS NOT NULL
     AND t.id > :after_id::uuid
   ORDER BY t.id
   LIMIT :limit::int)
  UNION ALL
  (SELECT t.id, t.attempt, t.lease_token, t.flow, t.tenant
   FROM tasks t
   WHERE t.state IN ('ASSIGNED', 'RUNNING') AND t.limit_names IS NULL
     AND t.tenant <> '' AND t.tenant = ANY(:tenants::text[])
     AND t.id > :after_id::uuid)
) AS leased
ORDER BY leased.id
LIMIT :limit::int
