-- The task graph: dependencies (PENDING -> QUEUED/SCHEDULED/CANCELLED), trees
-- and the children of a cancelled task. See dependencies.py and trees.py.

-- name: graph_missing_refs
-- Which of the ids (dependencies, parents of a new task) do not exist as a task
-- of the tenant that names it (:tenants, one per id): another tenant's task is
-- not there for it.
SELECT d.id::text AS id, d.tenant
FROM unnest(:ids::uuid[], :tenants::text[]) AS d(id, tenant)
WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = d.id AND t.tenant = d.tenant)

-- name: graph_hold_refs
-- graph_missing_refs inside an insert's transaction, before its rows: the
-- parents and dependencies its new tasks name (:ids) are held until COMMIT. Each
-- unfinished one of :dependencies is marked has_dependents (once: it is never
-- cleared), every other row is locked FOR SHARE, in id order. Both conflict
-- with the updates that cancel a task or make it final (FOR NO KEY UPDATE; FOR
-- KEY SHARE would not), so of such an update and this insert, made by two
-- stores, the second waits until the first commits, and then sees it
-- (dependencies.py): the insert's later statements see the parent cancelled
-- (cancel_orphans) or the dependency final (graph_cascade, graph_release); or
-- the cancel's next look for descendants sees the child, and the final's own
-- statement returns has_dependents (waited_on), so its store looks for dependents.
WITH flagged AS (
  UPDATE tasks t SET has_dependents = true
  WHERE t.id = ANY(:dependencies::uuid[]) AND NOT t.has_dependents
    AND t.state NOT IN ('SUCCESS', 'FAILURE', 'CANCELLED')
  RETURNING t.id
), held AS MATERIALIZED (
  SELECT t.id FROM tasks t
  WHERE t.id = ANY(:ids::uuid[]) AND t.id NOT IN (SELECT f.id FROM flagged f)
  ORDER BY t.id
  FOR SHARE
)
-- Joins read every row of held, so every one of them is locked.
SELECT d.id::text AS id
FROM unnest(:ids::uuid[]) AS d(id)
LEFT JOIN flagged f ON f.id = d.id
LEFT JOIN held h ON h.id = d.id
WHERE f.id IS NULL AND h.id IS NULL

-- name: graph_dependents
-- PENDING tasks waiting on any of :ids (the GIN index tasks_depends_on_idx).
SELECT t.id::text AS id FROM tasks t
WHERE t.depends_on && :ids::uuid[] AND t.state = 'PENDING'

-- name: graph_pending_page
-- The sweep: PENDING tasks in (created_at, id) order after the cursor.
SELECT t.id::text AS id, ty_us(t.created_at) AS created_at_us
FROM tasks t
WHERE t.state = 'PENDING'
  AND (:after_us::bigint IS NULL OR (t.created_at, t.id) > (ty_ts(:after_us::bigint), :after_id::uuid))
ORDER BY t.created_at, t.id
LIMIT :limit

-- name: graph_cascade
-- Candidates (:ids, PENDING) with a dependency that ended FAILURE or CANCELLED
-- become CANCELLED, and so do their PENDING dependents, transitively; the
-- reason names the direct dependency ("dependency <id> failed|cancelled").
-- :sources = sources of CANCELLED (PENDING among them).
WITH RECURSIVE doomed(id, dep, why, depth) AS (
  SELECT c.id, x.id, x.state::text, 0
  FROM tasks c
  CROSS JOIN LATERAL (
    SELECT x.id, x.state
    FROM unnest(c.depends_on) WITH ORDINALITY AS d(id, n)
    JOIN tasks x ON x.id = d.id
    WHERE x.state IN ('FAILURE', 'CANCELLED')
    ORDER BY d.n
    LIMIT 1
  ) x
  WHERE c.id = ANY(:ids::uuid[]) AND c.state = 'PENDING'
  UNION
  SELECT t.id, b.id, 'CANCELLED', b.depth + 1
  FROM doomed b
  JOIN tasks t ON t.depends_on @> ARRAY[b.id] AND t.state = 'PENDING'
  WHERE b.depth < 10000
), pick AS (
  SELECT DISTINCT ON (id) id, dep, why FROM doomed ORDER BY id, depth, dep
)
UPDATE tasks t
SET state = 'CANCELLED', cancel_step = 1,
    cancel_reason = 'dependency ' || p.dep::text
                    || CASE p.why WHEN 'FAILURE' THEN ' failed' ELSE ' cancelled' END,
    finished_at = now(), updated_at = now()
FROM pick p
WHERE t.id = p.id AND t.state = ANY(:sources::task_state[])
RETURNING {{record}}, t.has_dependents AS waited_on

-- name: graph_release
-- Candidates (:ids, PENDING) whose dependencies all ended SUCCESS: QUEUED, or
-- SCHEDULED while their ETA is ahead. A dependency no longer in the table was
-- purged by retention, which only removes final tasks, and one that had failed
-- would have cancelled this task already: it counts as met.
-- :sources = the states a release may start from (PENDING).
UPDATE tasks t
SET state = CASE WHEN t.run_at > now() THEN 'SCHEDULED'::task_state ELSE 'QUEUED'::task_state END,
    updated_at = now()
WHERE t.id = ANY(:ids::uuid[]) AND t.state = ANY(:sources::task_state[])
  AND NOT EXISTS (
    SELECT 1 FROM tasks x WHERE x.id = ANY(t.depends_on) AND x.state <> 'SUCCESS'
  )
RETURNING {{record}}

-- name: graph_descendants
-- Unfinished descendants (parent_id, transitively) of each of :ids, with the
-- asked-for ancestor they descend from.
WITH RECURSIVE d(id, top, depth) AS (
  SELECT c.id, c.parent_id, 1 FROM tasks c WHERE c.parent_id = ANY(:ids::uuid[])
  UNION
  SELECT c.id, d.top, d.depth + 1 FROM d JOIN tasks c ON c.parent_id = d.id
  WHERE d.depth < 10000
)
SELECT DISTINCT ON (d.id) d.id::text AS id, d.top::text AS top
FROM d JOIN tasks t ON t.id = d.id
WHERE t.state NOT IN ('SUCCESS', 'FAILURE', 'CANCELLED')
ORDER BY d.id, d.depth

-- name: graph_tree
-- The hierarchy under the root of :id (the topmost ancestor still stored),
-- depth-first, children in creation order; :limit rows at most.
WITH RECURSIVE start AS (
  SELECT coalesce((SELECT r.id FROM tasks r WHERE r.id = s.root_id), s.id) AS root
  -- Of the caller's tenant's task (scopes.py); a tree is one tenant's.
  FROM tasks s WHERE s.id = :id::uuid AND (:all_tenants::boolean OR s.tenant = :tenant::text)
), tree(id, depth, path, sortkey) AS (
  SELECT t.id, 0, ARRAY[t.id], ARRAY[lpad(ty_us(t.created_at)::text, 20, '0') || t.id::text]
  FROM tasks t JOIN start ON t.id = start.root
  UNION ALL
  SELECT c.id, tr.depth + 1, tr.path || c.id,
         tr.sortkey || (lpad(ty_us(c.created_at)::text, 20, '0') || c.id::text)
  FROM tree tr JOIN tasks c ON c.parent_id = tr.id
  WHERE tr.depth < 10000
)
SELECT {{record}}, tr.depth, tr.path::text[] AS path
FROM tree tr JOIN tasks t ON t.id = tr.id
ORDER BY tr.sortkey
LIMIT :limit
