-- Taskyard schema: every task name a worker pool has declared, kept for good.
-- A declared name stays submittable while no pool serves it (the task waits
-- QUEUED and ExplainTask says NO_POOL); only a name never declared is refused.
-- Kept apart from workers.task_names, which says what live pools serve now.

CREATE TABLE task_names (
  name        text PRIMARY KEY,
  declared_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO task_names (name)
SELECT DISTINCT n.name FROM workers w, unnest(w.task_names) AS n(name)
ON CONFLICT (name) DO NOTHING;
