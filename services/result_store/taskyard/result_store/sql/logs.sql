-- Task logs and context.

-- name: insert_logs
-- One multi-row insert for every line of a drain. Offsets come from tasks.log_seq,
-- taken under the task row's lock, so they are dense (0, 1, 2, ...) and ordered
-- per task whatever the number of concurrent batches. Past :max_lines lines per
-- task the rest is dropped and one marker line (:marker) says so, once. One
-- entry per line in each of :task_ids, :attempts, :at_us, :types, :messages.
WITH l AS (
  SELECT x.task_id, x.attempt, x.at_us, x.type, x.message,
         row_number() OVER (PARTITION BY x.task_id ORDER BY x.ord) - 1 AS rn
  FROM unnest(:task_ids::uuid[], :attempts::int[], :at_us::bigint[], :types::text[], :messages::text[])
       WITH ORDINALITY AS x(task_id, attempt, at_us, type, message, ord)
),
c AS (
  SELECT task_id, count(*) AS n, max(attempt) AS attempt FROM l GROUP BY task_id
),
cur AS (
  SELECT t.id, t.log_seq AS old, c.n, c.attempt
  FROM tasks t JOIN c ON c.task_id = t.id
  ORDER BY t.id
  FOR UPDATE OF t
),
plan AS (
  SELECT id, old, n, attempt,
         greatest(0, least(n, :max_lines::bigint - old)) AS allowed,
         CASE WHEN old + n > :max_lines::bigint AND old <= :max_lines::bigint THEN 1 ELSE 0 END
           AS marker
  FROM cur
),
bump AS (
  UPDATE tasks t SET log_seq = p.old + p.allowed + p.marker
  FROM plan p
  WHERE t.id = p.id AND p.allowed + p.marker > 0
  RETURNING t.id
),
ins AS (
  INSERT INTO task_logs (task_id, seq, attempt, type, message, created_at)
  SELECT l.task_id, p.old + l.rn, l.attempt, l.type, l.message,
         CASE WHEN l.at_us > 0 THEN ty_ts(l.at_us) ELSE now() END
  FROM l JOIN plan p ON p.id = l.task_id
  WHERE l.rn < p.allowed
  UNION ALL
  SELECT p.id, p.old + p.allowed, p.attempt, 'warning', :marker::text, now()
  FROM plan p
  WHERE p.marker = 1
  RETURNING 1
)
SELECT p.id::text AS task_id, p.old + p.allowed + p.marker AS log_seq,
       p.n - p.allowed AS dropped, p.allowed + p.marker AS stored,
       (SELECT count(*) FROM bump) AS bumped, (SELECT count(*) FROM ins) AS inserted
FROM plan p

-- name: apply_context
-- Context updates of running attempts (one merged patch per task, in order);
-- a superseded attempt's updates are ignored. A patch that sets "progress"
-- (:progress) logs one task.progress event with the progress it leaves, in this
-- statement, as the tasks table's triggers log a state change (0016 and 0025's
-- tasks_log_changed): the event commits with the context or not at all. Only
-- while the attempt is live and the progress is {"fraction": number, ...}: a
-- report that comes after its attempt's outcome changes the context only, so a
-- stream never sees a finished task "progress".
WITH changed AS (
  UPDATE tasks t
  SET context = taskyard_context_apply(t.context, u.patch::jsonb)
  FROM unnest(:ids::uuid[], :attempts::int[], :patches::text[], :progress::boolean[])
       AS u(id, attempt, patch, progress)
  WHERE t.id = u.id AND t.attempt = u.attempt
  RETURNING t.id, t.name, t.queue, t.root_id, t.state, t.attempt, t.priority, t.worker_id, t.tenant,
            CASE WHEN u.progress THEN t.context -> 'progress' END AS progress
),
logged AS (
  INSERT INTO events (kind, type, task_id, task_name, queue, root_id, state, attempt, priority,
                      worker_id, pool_id, attributes, tenant)
  SELECT 1, 'task.progress', n.id, n.name, n.queue, coalesce(n.root_id, n.id),
         ty_state_number(n.state), n.attempt, n.priority,
         nullif(n.worker_id, ''), nullif(substring(n.worker_id FROM '^(.*)/w'), ''),
         jsonb_build_object('fraction', n.progress ->> 'fraction',
                            'message', coalesce(n.progress ->> 'message', '')),
         n.tenant
  FROM changed n
  WHERE n.state IN ('ASSIGNED', 'RUNNING') AND jsonb_typeof(n.progress -> 'fraction') = 'number'
  ORDER BY n.id
  RETURNING 1
)
SELECT n.id::text AS id FROM changed n

-- name: log_head
-- Of the caller's tenant's task (scopes.py): another tenant's is not found.
SELECT t.state::text AS state, t.log_seq, t.trace_headers->>'traceparent' AS traceparent
FROM tasks t WHERE t.id = :id::uuid AND (:all_tenants::boolean OR t.tenant = :tenant::text)

-- name: get_logs
SELECT l.seq, l.type, l.message, ty_us(l.created_at) AS at_us, l.attempt
FROM task_logs l
WHERE l.task_id = :id::uuid AND l.seq >= :from_offset::bigint
ORDER BY l.seq
LIMIT :limit::int
