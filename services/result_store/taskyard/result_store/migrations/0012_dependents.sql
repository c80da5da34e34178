-- Taskyard schema: whether some task depends on a task (dependencies.py).
--
-- Set in the transaction that inserts a dependent, on each unfinished task it
-- depends on, and never cleared. The statements that make a task final return
-- it, so the store that commits the final knows whether to look for PENDING
-- dependents, whichever store inserted them: several stores share the
-- database, and none of them sees another's inserts any other way. Not
-- indexed, so setting it is a HOT update when the page has room.
ALTER TABLE tasks ADD COLUMN has_dependents boolean NOT NULL DEFAULT false;

-- The tasks already waited on when the column came.
UPDATE tasks t SET has_dependents = true
FROM (SELECT DISTINCT unnest(p.depends_on) AS id FROM tasks p WHERE p.state = 'PENDING') AS d
WHERE t.id = d.id;
