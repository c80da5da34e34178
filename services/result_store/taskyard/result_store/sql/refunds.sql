-- Circuit breakers' refunds (migrations/0020_breakers.sql, writes/refunds.py).

-- name: leader_term_now
-- The scheduler leader's term, its row share-locked for the rest of the
-- transaction: a refund of a deposed leader is refused, and a takeover waits
-- for a refund of the current one to commit.
SELECT s.term FROM scheduler_leader s FOR SHARE

-- name: refund_attempts
-- Give back the retry each failed attempt of (:ids, :attempts) spent, once: only
-- a failure that was charged (not throttled) and not refunded yet is, and only
-- while its task's uncharged attempts are below :max_uncharged (the cap a
-- throttled attempt has too: a downstream that never recovers does not keep a
-- task forever). Fenced: nothing unless :term is the scheduler leader's term
-- (whose row leader_term_now locked). Returns each task refunded: how many
-- attempts, and whether it is to be revived (revive_refunded): FAILURE because
-- its retries were spent (dead letter RETRIES_EXHAUSTED, 1) and its last
-- attempt's failure refunded now, with the latest :run_at_us asked for it.
-- An attempt at or below the one a redrive or RetryTasks started the task again
-- from (written_off_attempt, 0024_failure_rows.sql) is not refunded: its charge
-- was written off already (retry_base), and a refund would add a retry.
WITH r AS (
  SELECT r.id, r.attempt, max(r.run_at_us) AS run_at_us
  FROM unnest(:ids::uuid[], :attempts::int[], :run_at_us::bigint[]) AS r(id, attempt, run_at_us)
  WHERE EXISTS (SELECT 1 FROM scheduler_leader s WHERE s.term = :term::bigint)
  GROUP BY r.id, r.attempt
), f AS (
  UPDATE task_failures f
  SET refunded_at = now()
  FROM r JOIN tasks t0 ON t0.id = r.id
  WHERE f.task_id = r.id AND f.attempt = r.attempt AND f.charged AND f.refunded_at IS NULL
    AND t0.uncharged_attempts < :max_uncharged::int AND r.attempt > t0.written_off_attempt
  RETURNING f.task_id, f.attempt, r.run_at_us
), n AS (
  SELECT f.task_id, count(DISTINCT f.attempt)::int AS refunds, max(f.attempt) AS last_refunded,
         max(f.run_at_us) AS run_at_us
  FROM f GROUP BY f.task_id
)
UPDATE tasks t
SET uncharged_attempts = t.uncharged_attempts + n.refunds, updated_at = now()
FROM n
WHERE t.id = n.task_id
RETURNING t.id::text AS id, n.refunds, n.run_at_us,
          (t.state = 'FAILURE' AND t.dead_letter_reason = 1 AND NOT t.cancel_requested
           AND n.last_refunded = t.attempt) AS revive

-- name: revive_refunded
-- FAILURE -> RETRYING as a new attempt, due at :run_at_us (the breaker's next
-- probe; 0 or past: now), no longer a dead letter: the tasks refund_attempts
-- just found were failed by the charges it gave back. Guarded on the state and
-- reason it read, in the same transaction.
-- Never a task another task depends on: its failure went out final (task.failed)
-- and its PENDING dependents were cancelled for it, or are about to be, or were
-- cancelled as they were inserted (graph_cascade, cancel at insert); reviving it
-- would leave them CANCELLED with nothing to wait for. It stays FAILURE, a dead
-- letter, its failure refunded: a redrive or RetryTasks is the operator's call.
-- Exact, not racy: refund_attempts' update locked the row, and an insert of a
-- dependent locks it too (graph_hold_refs), so any such insert committed before
-- this statement's snapshot, or waits for this transaction to end.
UPDATE tasks t
SET state = 'RETRYING', attempt = t.attempt + 1, dead_letter_reason = 0,
    -- Its next attempt comes from the refund, not from a redrive (as retry_failed).
    redriven_from_attempt = 0,
    run_at = greatest(now(), ty_ts(v.run_at_us)), finished_at = NULL, updated_at = now()
FROM unnest(:ids::uuid[], :run_at_us::bigint[]) AS v(id, run_at_us)
WHERE t.id = v.id AND t.state = 'FAILURE' AND t.dead_letter_reason = 1
  AND NOT EXISTS (SELECT 1 FROM tasks d WHERE d.depends_on @> ARRAY[t.id])
RETURNING {{record}}

-- name: refunds_pending
-- Of (:ids, :attempts), the attempts whose outcome the store has not written yet:
-- the task is still at that attempt, leased, with no failure for it (the
-- scheduler hears an outcome from the pool's notice, which may overtake its
-- report). The scheduler asks for their refund again.
SELECT r.id::text AS id, r.attempt
FROM unnest(:ids::uuid[], :attempts::int[]) AS r(id, attempt)
JOIN tasks t ON t.id = r.id
WHERE t.attempt = r.attempt AND t.lease_token <> ''
  AND NOT EXISTS (SELECT 1 FROM task_failures f WHERE f.task_id = r.id AND f.attempt = r.attempt)

-- name: refund_retry_at
-- The refunded last failure of a revived task says when its next attempt is due
-- (TaskFailure.retry_at), as a failure that left it RETRYING does.
UPDATE task_failures f
SET retry_at = t.run_at
FROM unnest(:ids::uuid[]) AS r(id)
JOIN tasks t ON t.id = r.id
WHERE f.task_id = r.id AND f.attempt = t.attempt - 1 AND f.retry_at IS NULL
