-- Dead letters (migrations/0018_dead_letters.sql): FailureService's reads and purge.
-- A dead letter is a row with dead_letter_reason > 0 (it is FAILURE); its group
-- is failure_group, its final failure the row's failure_* columns, failed when
-- it finished.

-- name: dead_letter_filter
-- (A condition on tasks t.) A FailureFilter: the conjunction of what is set
-- ('' / 0 / '{}' / an empty array / a NULL time: not set; a time given is a
-- condition whatever it is, the epoch's 0 included). :failed_before_us is exclusive.
t.dead_letter_reason > 0
  -- The caller's tenant's (scopes.py): another tenant's dead letters are never reached.
  AND (:all_tenants::boolean OR t.tenant = :tenant::text)
  AND (:group_id::text = '' OR t.failure_group = :group_id::text)
  AND (:queue::text = '' OR t.queue = :queue::text)
  AND (:name::text = '' OR t.name = :name::text)
  AND (:failed_after_us::bigint IS NULL OR t.finished_at >= ty_ts(:failed_after_us::bigint))
  AND (:failed_before_us::bigint IS NULL OR t.finished_at < ty_ts(:failed_before_us::bigint))
  AND (:labels::text = '{}' OR t.labels @> :labels::jsonb)
  AND (cardinality(:task_ids::uuid[]) = 0 OR t.id = ANY(:task_ids::uuid[]))
  AND (:reason::smallint = 0 OR t.dead_letter_reason = :reason::smallint)
  -- A new redrive's reading: not one pending in an active redrive (0021).
  AND (NOT :not_pending::bool
       OR NOT EXISTS (SELECT 1 FROM redrive_items i WHERE i.task_id = t.id AND i.outcome = 1))

-- name: failure_groups
-- Groups of the dead letters a filter matches, most dead letters first (then by
-- id), keyset-paged after (:after_n, :after_group); each with what its newest
-- dead letter says of the fingerprint, and up to 5 ids, newest first.
WITH g AS (
  SELECT coalesce(t.failure_group, '') AS group_id, count(*) AS n,
         ty_us(min(t.finished_at)) AS first_us, ty_us(max(t.finished_at)) AS last_us
  FROM tasks t
  WHERE {{dead_letter_filter}}
  GROUP BY coalesce(t.failure_group, '')
), page AS (
  SELECT g.* FROM g
  WHERE :after_n::bigint IS NULL OR g.n < :after_n::bigint
     OR (g.n = :after_n::bigint AND g.group_id > :after_group::text)
  ORDER BY g.n DESC, g.group_id
  LIMIT :limit
)
SELECT page.group_id, page.n, page.first_us, page.last_us, s.ids,
       n.queue, n.name, coalesce(n.failure_type, '') AS type,
       ty_failure_mask(n.failure_message) AS message, ty_failure_frame(n.failure_traceback) AS frame,
       coalesce(n.failure_traceback, '') AS traceback
FROM page
CROSS JOIN LATERAL (
  SELECT array_agg(x.id::text ORDER BY x.finished_at DESC, x.id DESC) AS ids
  FROM (SELECT t.id, t.finished_at FROM tasks t
        -- failure_group itself, not coalesced: tasks_dead_letter_groups_idx serves it (a
        -- dead letter always has its group: fail_attempts and die_attempts set both).
        WHERE t.failure_group = page.group_id AND {{dead_letter_filter}}
        ORDER BY t.finished_at DESC, t.id DESC LIMIT 5) x
) s
JOIN tasks n ON n.id = s.ids[1]::uuid
ORDER BY page.n DESC, page.group_id

-- name: dead_letters
-- The dead letters a filter matches, newest failure first, keyset-paged after
-- (:after_us, :after_id); with the times each was redriven before (its failures
-- a redrive took it from).
SELECT t.id::text AS id, t.queue, t.name, t.dead_letter_reason, coalesce(t.failure_group, '') AS group_id,
       coalesce(t.failure_type, '') AS type, coalesce(t.failure_message, '') AS message,
       coalesce(t.failure_traceback, '') AS traceback, coalesce(t.failure_attempt, 0) AS attempt,
       ty_us(t.finished_at) AS failed_at_us, t.labels::text AS labels,
       (SELECT count(*) FROM task_failures f WHERE f.task_id = t.id AND f.redrive_id IS NOT NULL) AS redrives
FROM tasks t
WHERE {{dead_letter_filter}}
  AND (:after_us::bigint IS NULL OR (t.finished_at, t.id) < (ty_ts(:after_us::bigint), :after_id::uuid))
ORDER BY t.finished_at DESC, t.id DESC
LIMIT :limit

-- name: count_dead_letters
-- How many dead letters a filter matches, counting at most :limit + 1 (past
-- the limit the exact number does not matter).
SELECT count(*) AS n FROM (SELECT 1 FROM tasks t WHERE {{dead_letter_filter}} LIMIT :limit::bigint + 1) x

-- name: failure_group_known
-- Whether a group was ever seen: a dead letter or any failure of the caller's
-- tenant has it (another tenant's group is not found, as a missing one).
SELECT EXISTS (SELECT 1 FROM tasks t
               WHERE t.failure_group = :group_id::text AND t.dead_letter_reason > 0
                 AND (:all_tenants::boolean OR t.tenant = :tenant::text))
    OR EXISTS (SELECT 1 FROM task_failures f JOIN tasks t ON t.id = f.task_id
               WHERE f.group_id = :group_id::text AND (:all_tenants::boolean OR t.tenant = :tenant::text))
       AS known

-- name: purge_dead_letters
-- One chunk of PurgeDeadLetters: dead letters a filter matches, deleted with
-- their logs and failures (ON DELETE CASCADE).
DELETE FROM tasks x
WHERE x.id IN (
  SELECT t.id FROM tasks t
  WHERE {{dead_letter_filter}}
  LIMIT :limit
  FOR UPDATE SKIP LOCKED
) AND x.state = 'FAILURE' AND x.dead_letter_reason > 0
RETURNING x.id::text AS id
