-- Taskyard schema, the task graph: the sweep of PENDING tasks (dependents whose
-- release a crash between a commit and its resolve step would otherwise strand)
-- walks them oldest first.
CREATE INDEX tasks_pending_idx ON tasks (created_at, id) WHERE state = 'PENDING';
