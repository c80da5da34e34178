-- taskyard: no-transaction
-- Taskyard schema: the tenants' indexes on tasks, built CONCURRENTLY: tasks
-- takes writes while they build (a SHARE UPDATE EXCLUSIVE lock, not 0025's
-- ACCESS EXCLUSIVE). Each statement runs alone (migrate.py: no semicolon inside
-- a statement); an index a crash left INVALID is dropped and built again.

-- ListTasks of one tenant, newest first. Partial: the default tenant's rows (all
-- of a suite without tenants) cost no entry, and its listing keeps
-- tasks_listing_idx; a tenant's listing does not read the others' rows.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_tenant_listing_idx
  ON tasks (tenant, created_at DESC, id DESC) WHERE tenant <> '';

-- A tenant's dead letters (ListFailures, ListFailureGroups of one tenant).
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_tenant_dead_letters_idx
  ON tasks (tenant, finished_at DESC, id DESC) WHERE dead_letter_reason > 0 AND tenant <> '';

-- A new leader's counts of the tenants with a concurrency quota (sql/flow.sql
-- leased_flow_tenants, its arm of the attempts that use no limit; those that
-- do are tasks_leased_flow_idx's): their leased attempts, not the history
-- retention keeps of them, nor the default tenant's leased attempts.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_leased_tenant_idx
  ON tasks (tenant, id) WHERE state IN ('ASSIGNED', 'RUNNING') AND limit_names IS NULL AND tenant <> '';
