-- Every statement the store runs against tasks. Blocks start with "-- name: x";
-- "{{record}}" expands to the columns of a full TaskRecord of alias t.
-- Parameters are named (:ids); queries.py numbers them for asyncpg.
-- Guarded updates take their allowed source states as a task_state[] parameter
-- (taskyard.core.states.sources_of(target)); a text[] parameter cast twice
-- (::text::text[]) comes as one array literal (validation.text_array).

-- name: record
-- (A tenant's request ids and idempotency keys are stored qualified, "tenant/key",
-- so two tenants' keys never meet: writes/insert_checks.py; a record shows them
-- as they were given.)
t.id::text AS id, t.name, t.args::text AS args, t.kwargs::text AS kwargs, t.priority,
t.queue, t.timeout_ms, t.max_retries,
CASE WHEN t.tenant <> '' AND starts_with(t.request_id, t.tenant || '/')
     THEN substr(t.request_id, length(t.tenant) + 2) ELSE t.request_id END AS request_id,
coalesce(t.parent_id::text, '') AS parent_id, coalesce(t.root_id::text, '') AS root_id,
t.labels::text AS labels, t.state::text AS state, t.attempt,
coalesce(t.result::text, '') AS result,
t.failure_type, t.failure_message, t.failure_traceback, t.failure_attempt,
ty_us(t.created_at) AS created_at_us, ty_us(t.started_at) AS started_at_us,
ty_us(t.finished_at) AS finished_at_us, ty_us(t.updated_at) AS updated_at_us,
t.worker_id, t.cancel_requested, ty_us(t.run_at) AS run_at_us,
t.trace_headers::text AS trace_headers, t.lease_token, t.pool_id, t.resume_requested,
t.depends_on::text[] AS depends_on,
CASE WHEN t.tenant <> '' AND starts_with(t.idempotency_key, t.tenant || '/')
     THEN substr(t.idempotency_key, length(t.tenant) + 2) ELSE t.idempotency_key END AS idempotency_key,
t.context::text AS context,
coalesce(t.cancel_reason, '') AS cancel_reason, t.cancel_step, t.rescues,
coalesce(t.schedule_id::text, '') AS schedule_id,
ty_us(t.idempotency_expires_at) AS idempotency_expires_at_us,
t.uncharged_attempts, t.late_reports, t.late_attempt, t.flow,
coalesce(t.redrive_id::text, '') AS redrive_id, t.redriven_from_attempt, t.tenant

-- name: insert_tasks
-- One multi-row insert; duplicates (id, request_id or a live idempotency key,
-- also inside the batch) are skipped and looked up by lookup_duplicates. One
-- array per field of an InsertRow (insert_row.py), named as the field;
-- :flow and :limit_names are NULL for a batch without flow control (unnest pads
-- a NULL array with NULLs: no element is sent for such a batch).
-- The expired_keys CTE first frees the keys whose window has passed (the WHERE
-- reads it, so it runs before the first row is inserted). A child's root is
-- its parent's root.
WITH {{expired_keys}}
INSERT INTO tasks AS t (
  id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
  parent_id, root_id, labels, state, attempt, created_at, updated_at, run_at, trace_headers,
  depends_on, idempotency_key, idempotency_expires_at, flow, limit_names, tenant
)
SELECT r.id, r.name, r.args::jsonb, r.kwargs::jsonb, r.priority, r.queue, r.timeout_ms,
       r.max_retries, r.request_id, r.parent_id,
       coalesce(r.root_id, (SELECT p.root_id FROM tasks p WHERE p.id = r.parent_id), r.parent_id),
       r.labels::jsonb, r.state::task_state, r.attempt,
       CASE WHEN r.created_us > 0 THEN ty_ts(r.created_us) ELSE now() END, now(),
       CASE WHEN r.run_us > 0 THEN ty_ts(r.run_us) END,
       r.trace_headers::jsonb,
       r.deps::uuid[], r.ikey, CASE WHEN r.ikey <> '' THEN ty_ts(r.ikey_us) END,
       r.flow, r.limit_names::text[], r.tenant
FROM unnest(:id::uuid[], :name::text::text[], :args::text[], :kwargs::text[],
            :priority::smallint[], :queue::text::text[], :timeout_ms::bigint[],
            :max_retries::int[], :request_id::text::text[], :parent_id::uuid[], :root_id::uuid[],
            :labels::text[], :state::text::text[], :attempt::int[], :created_at_us::bigint[],
            :run_at_us::bigint[], :trace_headers::text[], :depends_on::text[],
            :idempotency_key::text::text[], :idempotency_expires_at_us::bigint[],
            :flow::bytea[], :limit_names::text[], :tenant::text::text[])
     AS r(id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
          parent_id, root_id, labels, state, attempt, created_us, run_us, trace_headers,
          deps, ikey, ikey_us, flow, limit_names, tenant)
WHERE (SELECT count(*) FROM expired_keys) >= 0
ON CONFLICT DO NOTHING
RETURNING t.id::text AS id, t.state::text AS state, t.attempt, t.priority, t.name, t.queue,
          ty_us(t.created_at) AS created_at_us, coalesce(t.root_id::text, '') AS root_id,
          t.flow, {{leader_term}}

-- name: insert_tasks_leasing
-- insert_tasks with the scheduler's fast path: a QUEUED row given a lease token
-- is inserted already leased (ASSIGNED), because a pool had a free slot and
-- nothing waited ahead of it; that is QUEUED -> ASSIGNED at the same instant,
-- in one statement instead of two. Full records come back for dispatch.
WITH {{expired_keys}}
INSERT INTO tasks AS t (
  id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
  parent_id, root_id, labels, state, attempt, created_at, updated_at, run_at, trace_headers,
  depends_on, idempotency_key, idempotency_expires_at, flow, limit_names, tenant,
  lease_token, pool_id, lease_expires_at
)
SELECT r.id, r.name, r.args::jsonb, r.kwargs::jsonb, r.priority, r.queue, r.timeout_ms,
       r.max_retries, r.request_id, r.parent_id,
       coalesce(r.root_id, (SELECT p.root_id FROM tasks p WHERE p.id = r.parent_id), r.parent_id),
       r.labels::jsonb,
       CASE WHEN r.lease THEN 'ASSIGNED'::task_state ELSE r.state::task_state END,
       r.attempt,
       CASE WHEN r.created_us > 0 THEN ty_ts(r.created_us) ELSE now() END, now(),
       CASE WHEN r.run_us > 0 THEN ty_ts(r.run_us) END,
       r.trace_headers::jsonb,
       r.deps::uuid[], r.ikey, CASE WHEN r.ikey <> '' THEN ty_ts(r.ikey_us) END,
       r.flow, r.limit_names::text[], r.tenant,
       CASE WHEN r.lease THEN r.token ELSE '' END,
       CASE WHEN r.lease THEN r.pool_id ELSE '' END,
       CASE WHEN r.lease THEN now() + r.lease_ms * interval '1 millisecond' END
FROM (
  SELECT r.*,
         -- Never leased at birth in a paused queue (the scheduler's view of
         -- pauses may lag): such a row is inserted QUEUED and waits; nor to a
         -- draining pool (see lease_tasks); nor for a scheduler's term that is
         -- over (fencing, as lease_tasks; 0 = unfenced).
         r.token <> '' AND r.state = 'QUEUED'
         AND (r.lease_term = 0 OR r.lease_term = (SELECT s.term FROM scheduler_leader s))
         AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = r.queue AND q.paused)
         AND NOT EXISTS (SELECT 1 FROM workers w
                         WHERE w.pool_id = r.pool_id AND w.state IN ('DRAINING', 'STOPPING')) AS lease
  FROM unnest(:id::uuid[], :name::text::text[], :args::text[], :kwargs::text[],
              :priority::smallint[], :queue::text::text[], :timeout_ms::bigint[],
              :max_retries::int[], :request_id::text::text[], :parent_id::uuid[], :root_id::uuid[],
              :labels::text[], :state::text::text[], :attempt::int[], :created_at_us::bigint[],
              :run_at_us::bigint[], :trace_headers::text[], :depends_on::text[],
              :idempotency_key::text::text[], :idempotency_expires_at_us::bigint[],
              :flow::bytea[], :limit_names::text[], :tenant::text::text[],
              :lease_token::text::text[], :pool_id::text::text[], :lease_ms::bigint[],
              :lease_term::bigint[])
       AS r(id, name, args, kwargs, priority, queue, timeout_ms, max_retries, request_id,
            parent_id, root_id, labels, state, attempt, created_us, run_us, trace_headers,
            deps, ikey, ikey_us, flow, limit_names, tenant, token, pool_id, lease_ms, lease_term)
  -- A fence: without it the planner pulls the subquery up and copies the
  -- lease test (and its subplans) into each CASE that reads it.
  OFFSET 0
) AS r
WHERE (SELECT count(*) FROM expired_keys) >= 0
ON CONFLICT DO NOTHING
RETURNING {{record}}, {{leader_term}}

-- name: cancel_orphans
-- New children (:ids) whose parent is CANCELLED or has a cancel requested: the
-- parent's cancel already swept its descendants (cancels.py), so a child it
-- submits afterwards is cancelled here, in the insert's own transaction.
-- :sources = sources of CANCELLED less RUNNING.
UPDATE tasks t
SET state = 'CANCELLED', cancel_reason = 'parent ' || p.id::text || ' cancelled', cancel_step = 1,
    finished_at = now(), updated_at = now(), lease_token = '', lease_expires_at = NULL, pool_id = ''
FROM tasks p
WHERE t.id = ANY(:ids::uuid[]) AND p.id = t.parent_id
  AND (p.state = 'CANCELLED' OR (p.cancel_requested AND p.state = 'RUNNING'))
  AND t.state = ANY(:sources::task_state[])
RETURNING {{record}}

-- name: parent_tenants
-- The tenants of the parents an insert names (a child is its parent's tenant's).
SELECT t.id::text AS id, t.tenant FROM tasks t WHERE t.id = ANY(:ids::uuid[])

-- name: lookup_duplicates
-- A request id or key is its tenant's own (0026_tenant_keys.sql): the rows come
-- with their tenant and the caller matches (tenant, key).
SELECT t.id::text AS id, t.request_id, t.idempotency_key, t.state::text AS state, t.attempt,
       t.priority, t.name, t.queue, t.flow, t.tenant
FROM tasks t
WHERE t.id = ANY(:ids::uuid[]) OR (t.request_id <> '' AND t.request_id = ANY(:request_ids::text[]))
   OR (t.idempotency_key <> '' AND t.idempotency_key = ANY(:idempotency_keys::text[]))

-- name: expired_keys
-- (A CTE of the inserts; :idempotency_key = the keys of the rows being
-- inserted.) Frees the idempotency keys whose window has passed, by the database
-- clock, so the unique index tasks_idempotency_key_tenant_key lets a new task take them.
-- The tenants of the rows being inserted only: a key is its tenant's own.
expired_keys AS (
  UPDATE tasks o SET idempotency_key = ''
  WHERE o.idempotency_key <> '' AND o.idempotency_key = ANY(:idempotency_key::text::text[])
    AND o.tenant = ANY(:tenant::text::text[])
    AND o.idempotency_expires_at <= now()
  RETURNING 1
)

-- name: get_tasks
-- With what GetTask shows of a dead letter (0018_dead_letters.sql).
SELECT {{record}}, t.dead_letter_reason, coalesce(t.failure_group, '') AS failure_group
FROM tasks t WHERE t.id = ANY(:ids::uuid[]) AND (:all_tenants::boolean OR t.tenant = :tenant::text)

-- name: list_filters
-- (ListTasks' filters on tasks t; the keyset cursor (created_at, id) of the last
-- row of the previous page.)
(:states::task_state[] IS NULL OR t.state = ANY(:states::task_state[]))
  AND (:name::text = '' OR t.name = :name::text)
  AND (:queue::text = '' OR t.queue = :queue::text)
  AND (:priority::smallint = 0 OR t.priority = :priority::smallint)
  AND (:after_us::bigint IS NULL OR (t.created_at, t.id) < (ty_ts(:after_us::bigint), :after_id::uuid))

-- name: list_tasks
-- Newest first: every tenant's, or (:all_tenants false) the default tenant's
-- (tasks_listing_idx either way).
SELECT {{record}}
FROM tasks t
WHERE {{list_filters}}
  AND (:all_tenants::boolean OR t.tenant = '')
ORDER BY t.created_at DESC, t.id DESC
LIMIT :limit

-- name: list_tenant_tasks
-- Newest first, of one tenant other than the default one: tasks_tenant_listing_idx,
-- whose predicate is written out so that a generic plan may use it too.
SELECT {{record}}
FROM tasks t
WHERE t.tenant = :tenant::text AND t.tenant <> ''
  AND {{list_filters}}
ORDER BY t.created_at DESC, t.id DESC
LIMIT :limit

-- name: lease_tasks
-- QUEUED -> ASSIGNED with a fresh lease; one row per (task, token, pool, lease).
-- Text columns come as one array literal each (validation.text_array).
UPDATE tasks t
SET state = 'ASSIGNED', lease_token = l.token, pool_id = l.pool_id, worker_id = '',
    lease_expires_at = now() + l.lease_ms * interval '1 millisecond', updated_at = now()
FROM unnest(:ids::uuid[], :tokens::text::text[], :pool_ids::text::text[], :lease_ms::bigint[])
     AS l(id, token, pool_id, lease_ms)
WHERE t.id = l.id AND t.state = ANY(:sources::task_state[])
  -- Fencing: only the leading scheduler's :term leases (a deposed leader that has
  -- not noticed yet leases nothing); 0 is unfenced (no election: tests, tools).
  -- It names no row, so it gates the whole statement once.
  AND (:term::bigint = 0 OR :term::bigint = (SELECT s.term FROM scheduler_leader s))
  -- A paused queue's tasks stay QUEUED (a dispatch that raced the pause).
  AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = t.queue AND q.paused)
  -- A draining pool beats its state before it stops its workers: no lease
  -- committed after that goes to it (it may stop listening before the dispatch
  -- arrives); the ones committed before are released by its final hand-back.
  -- Nor to a pool declared lost (STOPPED: no store has heard it for
  -- pool_lost_after) until its heartbeat reaches a store again: what it ran
  -- could not be reported, whatever a scheduler that still reaches it thinks.
  AND NOT EXISTS (SELECT 1 FROM workers w
                  WHERE w.pool_id = l.pool_id AND w.state IN ('DRAINING', 'STOPPING', 'STOPPED'))
RETURNING {{record}}

-- name: start_attempts
-- ASSIGNED -> RUNNING, fenced on attempt and lease token.
UPDATE tasks t
SET state = 'RUNNING', started_at = now(), updated_at = now(), worker_id = s.worker_id
FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :worker_ids::text::text[])
     AS s(id, attempt, token, worker_id)
WHERE t.id = s.id AND t.attempt = s.attempt AND t.lease_token = s.token
  AND t.state = ANY(:sources::task_state[])
RETURNING t.id::text AS id, t.state::text AS state, t.attempt, t.name, t.priority,
          t.worker_id, ty_us(t.updated_at) AS at_us, t.queue,
          coalesce(t.root_id::text, '') AS root_id, s.token AS ref_token

-- name: fail_attempts
-- Failed attempts -> RETRYING (attempt + 1, run_at = now() + delay) when
-- retryable and its charged attempts (attempt - uncharged_attempts - retry_base)
-- <= max_retries, else FAILURE. Fenced; each failure is
-- kept in task_failures. Successes go through complete_successes.
-- A throttled attempt (RetryAfter, a 429/503 answer: circuit breakers) spends no
-- retry: RETRYING as an uncharged attempt, run_at after its Retry-After, while
-- the task's uncharged attempts are below :max_uncharged (past it, it is charged).
WITH c AS (
  SELECT c.*, CASE
           -- A failure while a cancel was requested stops the task for good: the
           -- user asked for it to end, so no retry.
           WHEN t0.cancel_requested THEN 'CANCELLED'::task_state
           WHEN c.throttled AND t0.uncharged_attempts < :max_uncharged THEN 'RETRYING'::task_state
           -- max_retries -1: the budget the pool resolved from @task(...) or its default.
           -- Only charged attempts spend it (0007_executions.sql), since the last
           -- redrive or retry (retry_base, 0021_redrive_budget.sql).
           WHEN c.retryable AND c.attempt - t0.uncharged_attempts - t0.retry_base
                                <= CASE WHEN t0.max_retries >= 0 THEN t0.max_retries
                                        ELSE c.max_retries END THEN 'RETRYING'::task_state
           ELSE 'FAILURE'::task_state END AS target,
         -- Whether it spends no retry as a throttled attempt (the CASE's second branch):
         -- task_failures.charged, so a breaker's refund never gives it back twice (0020).
         (c.throttled AND NOT t0.cancel_requested AND t0.uncharged_attempts < :max_uncharged) AS free,
         fp.fmask, fp.fframe, g.fgroup
  FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :failure_types::text[],
              :failure_messages::text[], :tracebacks::text[], :retryable::bool[],
              :delays_ms::bigint[], :worker_ids::text::text[], :started_us::bigint[],
              :max_retries::int[], :throttled::bool[])
       AS c(id, attempt, token, ftype, fmsg, ftb, retryable, delay_ms, worker_id, started_us,
            max_retries, throttled)
  JOIN tasks t0 ON t0.id = c.id
  -- The failure's fingerprint and group (0018_dead_letters.sql).
  CROSS JOIN LATERAL (SELECT ty_failure_mask(c.fmsg) AS fmask, ty_failure_frame(c.ftb) AS fframe) fp
  CROSS JOIN LATERAL (SELECT ty_failure_group(t0.queue, t0.name, c.ftype, fp.fmask, fp.fframe) AS fgroup) g
), upd AS (
  UPDATE tasks t
  SET state = c.target,
      attempt = CASE WHEN c.target = 'RETRYING' THEN t.attempt + 1 ELSE t.attempt END,
      uncharged_attempts = t.uncharged_attempts
        + CASE WHEN c.target = 'RETRYING' AND c.throttled AND t.uncharged_attempts < :max_uncharged
               THEN 1 ELSE 0 END,
      failure_type = c.ftype, failure_message = c.fmsg, failure_traceback = c.ftb,
      failure_attempt = c.attempt, failure_group = c.fgroup,
      -- A final failure is a dead letter: RETRIES_EXHAUSTED (1) or NOT_RETRYABLE (3).
      dead_letter_reason = CASE WHEN c.target <> 'FAILURE' THEN 0
                                WHEN c.retryable OR c.throttled THEN 1 ELSE 3 END,
      run_at = CASE WHEN c.target = 'RETRYING'
                    THEN now() + greatest(c.delay_ms, 0) * interval '1 millisecond' ELSE t.run_at END,
      finished_at = CASE WHEN c.target = 'RETRYING' THEN t.finished_at ELSE now() END,
      -- It stopped itself (raised) with its cancel flag set: CANCEL_STEP_FLAG.
      cancel_step = CASE WHEN c.target = 'CANCELLED' THEN 2 ELSE t.cancel_step END,
      -- The outcome may overtake the start notice (ASSIGNED -> final).
      started_at = coalesce(t.started_at, ty_ts(nullif(c.started_us, 0)), now()),
      worker_id = CASE WHEN c.worker_id <> '' THEN c.worker_id ELSE t.worker_id END,
      lease_token = '', lease_expires_at = NULL, resume_requested = false,
      updated_at = now()
  FROM c
  WHERE t.id = c.id AND t.attempt = c.attempt AND t.lease_token = c.token
    AND t.state = ANY(CASE c.target WHEN 'RETRYING' THEN :retrying_sources::task_state[]
                                    WHEN 'CANCELLED' THEN :cancelled_sources::task_state[]
                                    ELSE :failure_sources::task_state[] END)
  RETURNING {{record}}, c.token AS ref_token, c.attempt AS ref_attempt,
            c.ftype, c.fmsg, c.ftb, c.worker_id AS ref_worker, t.has_dependents AS waited_on,
            c.fgroup, c.fmask, c.fframe, c.free,
            -- Its first uncharged attempt: a free one is counted by this update.
            (c.free AND t.uncharged_attempts = 1) AS first_free
), failures AS (
  INSERT INTO task_failures (task_id, attempt, type, message, traceback, worker_id, retry_at,
                             group_id, masked_message, frame, charged)
  SELECT u.id::uuid, u.ref_attempt, coalesce(u.ftype, ''), coalesce(u.fmsg, ''),
         -- A throttled failure keeps its traceback only on the task's first uncharged
         -- attempt: a downstream throttling for hours writes thousands of them, each
         -- the same answer. The latest is on the task's row (failure_traceback),
         -- which reads show for it (sql/time.sql task_failures).
         CASE WHEN u.free AND NOT u.first_free THEN '' ELSE coalesce(u.ftb, '') END, u.ref_worker,
         -- When the next attempt is due (0004_time.sql).
         CASE WHEN u.state = 'RETRYING' THEN ty_ts(u.run_at_us) END,
         u.fgroup, u.fmask, u.fframe, NOT u.free
  FROM upd u
)
SELECT * FROM upd

-- name: complete_successes
-- The common case on its own: successful attempts -> SUCCESS (no retry decision,
-- no failure row). Fenced on attempt and lease token; :sources = sources of SUCCESS.
UPDATE tasks t
SET state = 'SUCCESS', result = c.result::jsonb, finished_at = now(),
    -- The outcome may overtake the start notice (ASSIGNED -> SUCCESS).
    started_at = coalesce(t.started_at, ty_ts(nullif(c.started_us, 0)), now()),
    worker_id = CASE WHEN c.worker_id <> '' THEN c.worker_id ELSE t.worker_id END,
    lease_token = '', lease_expires_at = NULL, resume_requested = false, updated_at = now()
FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :results::text[],
            :worker_ids::text::text[], :started_us::bigint[])
     AS c(id, attempt, token, result, worker_id, started_us)
WHERE t.id = c.id AND t.attempt = c.attempt AND t.lease_token = c.token
  AND t.state = ANY(:sources::task_state[])
RETURNING {{record}}, c.token AS ref_token, c.attempt AS ref_attempt, t.has_dependents AS waited_on

-- name: release_attempts
-- ASSIGNED/RUNNING -> QUEUED, no retry burned: the attempt may have run its body
-- (a drain stops started ones), so the next run is a new, uncharged attempt
-- (attempt + 1, uncharged_attempts + 1). Fenced. A row
-- whose cancel was requested (the pool was stopped before it could report the
-- cancel) -> CANCELLED, step ASYNCIO for a started attempt (resume: the release
-- stopped it), NOT_STARTED for one the pool hands back unstarted; dispatching
-- it again would lose the user's cancel. :queued_sources/:cancelled_sources =
-- leased sources of QUEUED/CANCELLED. Full records: a CANCELLED one is a final for the resolver.
-- A release that says "not started" (resume false: a refused dispatch, a
-- scheduler whose send failed) never applies to a RUNNING row: the start notice
-- proves a worker ran it, so it is an attempt for the death/lapse path to count,
-- not a free re-queue (a pool may get a dispatch from the store's stream while
-- the scheduler's own copy fails).
UPDATE tasks t
SET state = CASE WHEN t.cancel_requested THEN 'CANCELLED'::task_state ELSE 'QUEUED'::task_state END,
    cancel_step = CASE WHEN NOT t.cancel_requested THEN t.cancel_step
                       WHEN r.resume THEN 3 ELSE 1 END,
    finished_at = CASE WHEN t.cancel_requested THEN now() ELSE t.finished_at END,
    pool_id = CASE WHEN t.cancel_requested THEN t.pool_id ELSE '' END,
    worker_id = CASE WHEN t.cancel_requested THEN t.worker_id ELSE '' END,
    resume_requested = r.resume AND NOT t.cancel_requested,
    attempt = CASE WHEN t.cancel_requested THEN t.attempt ELSE t.attempt + 1 END,
    uncharged_attempts = CASE WHEN t.cancel_requested THEN t.uncharged_attempts
                              ELSE t.uncharged_attempts + 1 END,
    lease_token = '', lease_expires_at = NULL, updated_at = now()
FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :resume::bool[])
     AS r(id, attempt, token, resume)
WHERE t.id = r.id AND t.attempt = r.attempt AND t.lease_token = r.token
  AND t.state = ANY(CASE WHEN t.cancel_requested THEN :cancelled_sources::task_state[]
                         ELSE :queued_sources::task_state[] END)
  AND (r.resume OR t.cancel_requested OR t.state = 'ASSIGNED')
RETURNING {{record}}, r.token AS ref_token, r.attempt AS ref_attempt, t.has_dependents AS waited_on

-- name: die_attempts
-- The worker died holding the attempt (or its lease lapsed). It had started
-- when the pool says so or the row is RUNNING (the start notice may still be on
-- its way): not started -> QUEUED as a new, uncharged attempt (the body may
-- have run within the start-notice delay); started -> a retryable failure
-- of type WorkerProcessDied (:message): RETRYING or FAILURE, counted in
-- tasks.rescues; the death that reaches the cap (:max_rescues, 0 = none)
-- quarantines the task (FAILURE, message "quarantined: ..."), whatever its retry
-- budget. A death the pool caused to enforce a cancel request (:cancel_steps =
-- CANCEL_STEP_KILL), or any death of a task whose cancel was requested, -> CANCELLED.
-- :*_sources = sources of QUEUED/RETRYING/FAILURE/CANCELLED (leased states).
WITH d AS (
  SELECT d.*, t0.attempt AS cur_attempt,
         (d.max_rescues > 0 AND t0.rescues + 1 >= d.max_rescues) AS quarantine, q.fmsg, g.fmask, g.fgroup,
         CASE
           -- A cancel was requested (on a leased row): the death ends it as
           -- CANCELLED, never a retry; the step as the pool says (KILL: it killed
           -- the worker to enforce the cancel), else NOT_STARTED when the pool
           -- says it had not started it and no start notice came, else KILL.
           WHEN t0.cancel_requested THEN 'CANCELLED'::task_state
           WHEN t0.state <> 'RUNNING' AND NOT d.started THEN 'QUEUED'::task_state
           WHEN d.max_rescues > 0 AND t0.rescues + 1 >= d.max_rescues THEN 'FAILURE'::task_state
           -- Charged attempts since the last redrive or retry (0021_redrive_budget.sql).
           WHEN d.attempt - t0.uncharged_attempts - t0.retry_base
                <= CASE WHEN t0.max_retries >= 0 THEN t0.max_retries
                        ELSE d.max_retries END THEN 'RETRYING'::task_state
           ELSE 'FAILURE'::task_state END AS target
  FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :started::bool[],
              :delays_ms::bigint[], :max_retries::int[], :max_rescues::int[],
              :cancel_steps::smallint[])
       AS d(id, attempt, token, started, delay_ms, max_retries, max_rescues, cancel_step)
  JOIN tasks t0 ON t0.id = d.id
  -- The failure's message, fingerprint (no traceback: no frame) and group (0018_dead_letters.sql).
  CROSS JOIN LATERAL (
    SELECT CASE WHEN d.max_rescues > 0 AND t0.rescues + 1 >= d.max_rescues
                THEN 'quarantined: its worker died ' || (t0.rescues + 1)
                     || ' times running it (TASKYARD_MAX_RESCUES = ' || d.max_rescues || ')'
                ELSE :message::text END AS fmsg) q
  CROSS JOIN LATERAL (SELECT m.fmask, ty_failure_group(t0.queue, t0.name, 'WorkerProcessDied', m.fmask, '') AS fgroup
                      FROM (SELECT ty_failure_mask(q.fmsg) AS fmask) m) g
), upd AS (
  UPDATE tasks t
  SET state = d.target,
      attempt = CASE WHEN d.target IN ('RETRYING', 'QUEUED') THEN t.attempt + 1 ELSE t.attempt END,
      uncharged_attempts = CASE WHEN d.target = 'QUEUED' THEN t.uncharged_attempts + 1
                                ELSE t.uncharged_attempts END,
      rescues = CASE WHEN d.target IN ('RETRYING', 'FAILURE') THEN t.rescues + 1 ELSE t.rescues END,
      cancel_step = CASE WHEN d.target = 'CANCELLED'
                         THEN coalesce(nullif(d.cancel_step, 0),
                                       CASE WHEN t.state = 'ASSIGNED' AND NOT d.started THEN 1
                                            ELSE 4 END)::smallint
                         ELSE t.cancel_step END,
      failure_type = CASE WHEN d.target IN ('QUEUED', 'CANCELLED') THEN t.failure_type
                          ELSE 'WorkerProcessDied' END,
      failure_message = CASE WHEN d.target IN ('QUEUED', 'CANCELLED') THEN t.failure_message
                             ELSE d.fmsg END,
      failure_traceback = CASE WHEN d.target IN ('QUEUED', 'CANCELLED') THEN t.failure_traceback
                               ELSE '' END,
      failure_attempt = CASE WHEN d.target IN ('QUEUED', 'CANCELLED') THEN t.failure_attempt
                             ELSE d.attempt END,
      failure_group = CASE WHEN d.target IN ('QUEUED', 'CANCELLED') THEN t.failure_group ELSE d.fgroup END,
      -- A death that ends it is a dead letter: QUARANTINED (2) or RETRIES_EXHAUSTED (1).
      dead_letter_reason = CASE WHEN d.target <> 'FAILURE' THEN 0 WHEN d.quarantine THEN 2 ELSE 1 END,
      run_at = CASE WHEN d.target = 'RETRYING'
                    THEN now() + greatest(d.delay_ms, 0) * interval '1 millisecond' ELSE t.run_at END,
      finished_at = CASE WHEN d.target IN ('FAILURE', 'CANCELLED') THEN now() ELSE t.finished_at END,
      pool_id = CASE WHEN d.target = 'QUEUED' THEN '' ELSE t.pool_id END,
      worker_id = CASE WHEN d.target = 'QUEUED' THEN '' ELSE t.worker_id END,
      lease_token = '', lease_expires_at = NULL, resume_requested = false,
      updated_at = now()
  FROM d
  WHERE t.id = d.id AND t.attempt = d.attempt AND t.lease_token = d.token
    AND t.state = ANY(CASE d.target WHEN 'QUEUED' THEN :queued_sources::task_state[]
                                    WHEN 'RETRYING' THEN :retrying_sources::task_state[]
                                    WHEN 'CANCELLED' THEN :cancelled_sources::task_state[]
                                    ELSE :failure_sources::task_state[] END)
  RETURNING {{record}}, d.token AS ref_token, d.attempt AS ref_attempt, d.target::text AS target,
            t.failure_message AS fmsg, t.has_dependents AS waited_on, d.fgroup, d.fmask
), failures AS (
  INSERT INTO task_failures (task_id, attempt, type, message, worker_id, retry_at, group_id, masked_message)
  SELECT u.id::uuid, u.ref_attempt, 'WorkerProcessDied', u.fmsg, u.worker_id,
         CASE WHEN u.state = 'RETRYING' THEN ty_ts(u.run_at_us) END, u.fgroup, u.fmask
  FROM upd u WHERE u.target IN ('RETRYING', 'FAILURE')
)
SELECT * FROM upd

-- name: cancel_attempts
-- A leased attempt its cancel request stopped (the pool says which step:
-- NOT_STARTED when the pool never started its body, else FLAG or ASYNCIO) ->
-- CANCELLED with that step. Fenced, and only for rows whose cancel was
-- requested. :sources = sources of CANCELLED (leased states).
UPDATE tasks t
SET state = 'CANCELLED', cancel_step = c.step, finished_at = now(),
    -- A body that never ran has no start time (even if a start notice set one).
    started_at = CASE WHEN c.step = 1 THEN NULL
                      ELSE coalesce(t.started_at, ty_ts(nullif(c.started_us, 0)), now()) END,
    worker_id = CASE WHEN c.worker_id <> '' THEN c.worker_id ELSE t.worker_id END,
    lease_token = '', lease_expires_at = NULL, resume_requested = false, updated_at = now()
FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text::text[], :steps::smallint[],
            :worker_ids::text::text[], :started_us::bigint[])
     AS c(id, attempt, token, step, worker_id, started_us)
WHERE t.id = c.id AND t.attempt = c.attempt AND t.lease_token = c.token
  AND t.cancel_requested AND t.state = ANY(:sources::task_state[])
RETURNING {{record}}, c.token AS ref_token, c.attempt AS ref_attempt, t.has_dependents AS waited_on

-- name: attempts_now
-- The current attempt and lease of refused completions (late_completions), and
-- whether a cancel ended the task as not started (its attempt may have run).
SELECT t.id::text AS id, t.attempt, t.lease_token,
       (t.state = 'CANCELLED' AND t.cancel_step = 1) AS cancelled_unstarted
FROM tasks t WHERE t.id = ANY(:ids::uuid[])

-- name: note_late_reports
-- Refused outcomes of superseded attempts, on their task's row: how many, and
-- the last such attempt. Not a state change (final rows stay final, their
-- outcome untouched); :ids/:attempts = one entry per refused report.
UPDATE tasks t
SET late_reports = t.late_reports + l.n, late_attempt = greatest(t.late_attempt, l.attempt)
FROM (SELECT id, count(*)::int AS n, max(attempt) AS attempt
      FROM unnest(:ids::uuid[], :attempts::int[]) AS r(id, attempt) GROUP BY id ORDER BY id) AS l
WHERE t.id = l.id
RETURNING {{record}}

-- name: lapsed_leases
-- Attempts whose lease lapsed by the database clock, oldest first.
SELECT t.id, t.attempt, t.lease_token, (t.state = 'RUNNING') AS started
FROM tasks t
WHERE t.state IN ('ASSIGNED', 'RUNNING') AND t.lease_expires_at < now()
ORDER BY t.lease_expires_at
LIMIT :limit
FOR UPDATE SKIP LOCKED

-- name: renew_leases
-- Extends current leases (database clock); cancel_requested travels back so a
-- pool that missed the cancel event still stops the attempt.
UPDATE tasks t
SET lease_expires_at = now() + :lease_ms::bigint * interval '1 millisecond'
FROM unnest(:ids::uuid[], :attempts::int[], :tokens::text[]) AS r(id, attempt, token)
WHERE t.id = r.id AND t.attempt = r.attempt AND t.lease_token = r.token
  AND t.state IN ('ASSIGNED', 'RUNNING')
RETURNING t.id::text AS id, r.attempt AS ref_attempt, r.token AS ref_token, t.cancel_requested

-- name: cancel_now
-- Not handed to a pool (no lease): CANCELLED now, stopped before it started
-- (CANCEL_STEP_NOT_STARTED), which no pool can contradict: a pool only ever
-- runs an attempt it was leased. :sources = sources of CANCELLED less the
-- leased states (ASSIGNED, RUNNING): those get the flag (cancel_flag).
UPDATE tasks t
SET state = 'CANCELLED', cancel_reason = :reason::text, cancel_step = 1,
    finished_at = now(), updated_at = now(),
    lease_token = '', lease_expires_at = NULL
WHERE t.id = ANY(:ids::uuid[]) AND t.state = ANY(:sources::task_state[])
  AND (:all_tenants::boolean OR t.tenant = :tenant::text)
RETURNING {{record}}, t.has_dependents AS waited_on

-- name: cancel_flag
-- Leased (ASSIGNED: dispatched, maybe not started yet; RUNNING): only the flag.
-- Its pool is told and says how the attempt stopped: NOT_STARTED when it had
-- not started the body, else the step that stopped it (FLAG, ASYNCIO, KILL).
-- An ASSIGNED row is never CANCELLED here: its worker may be starting the body
-- while the start notice is on its way, and "not started" would be a guess.
UPDATE tasks t
SET cancel_requested = true, cancel_reason = :reason::text, updated_at = now()
WHERE t.id = ANY(:ids::uuid[]) AND t.state IN ('ASSIGNED', 'RUNNING')
  AND (:all_tenants::boolean OR t.tenant = :tenant::text)
RETURNING {{record}}

-- name: cancel_lookup
SELECT {{record}} FROM tasks t
WHERE t.id = ANY(:ids::uuid[]) AND (:all_tenants::boolean OR t.tenant = :tenant::text)

-- name: load_queued
-- QUEUED refs in dispatch order, keyset-paged on (priority, created_at, id).
SELECT t.id::text AS id, t.name, t.priority, t.queue, ty_us(t.created_at) AS created_at_us, t.flow,
       t.tenant
FROM tasks t
WHERE t.state = 'QUEUED'
  AND (:after_priority::smallint IS NULL
       OR (t.priority, t.created_at, t.id)
          > (:after_priority::smallint, ty_ts(:after_us::bigint), :after_id::uuid))
ORDER BY t.priority, t.created_at, t.id
LIMIT :limit

-- name: promote_due
-- SCHEDULED/RETRYING rows whose run_at passed (database clock) -> QUEUED.
WITH due AS (
  SELECT t.id FROM tasks t
  WHERE t.state IN ('SCHEDULED', 'RETRYING') AND t.run_at <= now()
  ORDER BY t.run_at
  LIMIT :limit
  FOR UPDATE SKIP LOCKED
)
UPDATE tasks t
SET state = 'QUEUED', updated_at = now()
FROM due
WHERE t.id = due.id AND t.state = ANY(:sources::task_state[])
RETURNING t.id::text AS id, t.name, t.priority, t.queue, ty_us(t.created_at) AS created_at_us,
          t.attempt, t.worker_id, ty_us(t.updated_at) AS at_us, coalesce(t.root_id::text, '') AS root_id,
          t.flow, t.tenant

-- name: release_orphaned_leases
-- Restart reconciliation (scheduler/reconciler.py): ASSIGNED -> QUEUED as a
-- new, uncharged attempt (the store's stream may have delivered it), for
-- leases of the pools that answered a survey (:pool_ids) whose token none of
-- them reported holding (:held_tokens), not issued by the asking scheduler
-- (:own_prefix of the token, '' = none of its own) and issued more than
-- :issued_before_ms ago by the database clock. updated_at is the issue time:
-- the lease sets it and nothing moves an ASSIGNED row's updated_at back (a later
-- touch only makes it look newer, i.e. kept). RUNNING rows are never touched
-- (the IN list keeps the lease index usable; :sources = sources of QUEUED that
-- are ASSIGNED). Fencing: a scheduler's :term (0 = unfenced) must be the
-- leading one, and then only leases of earlier terms go back (a token issued in
-- a term starts "t<term>.", one without is of term 0).
WITH orphan AS (
  SELECT t.id FROM tasks t
  WHERE t.state IN ('ASSIGNED', 'RUNNING') AND t.state = ANY(:sources::task_state[])
    AND t.pool_id = ANY(:pool_ids::text[]) AND NOT (t.lease_token = ANY(:held_tokens::text[]))
    AND (:own_prefix::text = '' OR NOT starts_with(t.lease_token, :own_prefix::text))
    AND (:term::bigint = 0
         OR (:term::bigint = (SELECT s.term FROM scheduler_leader s)
             AND coalesce(substring(t.lease_token FROM '^t([0-9]{1,18})[.]')::bigint, 0) < :term::bigint))
    AND t.updated_at < now() - :issued_before_ms::bigint * interval '1 millisecond'
  ORDER BY t.updated_at
  LIMIT :limit
  FOR UPDATE SKIP LOCKED
)
UPDATE tasks t
SET state = 'QUEUED', lease_token = '', lease_expires_at = NULL, pool_id = '', worker_id = '',
    attempt = t.attempt + 1, uncharged_attempts = t.uncharged_attempts + 1, updated_at = now()
FROM orphan
WHERE t.id = orphan.id AND t.state = ANY(:sources::task_state[])
RETURNING {{record}}

-- name: next_due
SELECT ty_us(min(t.run_at)) FROM tasks t WHERE t.state IN ('SCHEDULED', 'RETRYING')
