-- Taskyard schema: a redriven or manually retried task gets its retry budget
-- back, and redrives get their bounds (docs/failures.md).
--
-- The budget counts charged attempts: attempt - uncharged_attempts (0007). A
-- redrive or a RetryTasks starts a task again as a new attempt of the same row,
-- so without more it would find its budget spent and fail for good at its first
-- failure. retry_base is the charged attempts a redrive or a retry wrote off:
-- set then to attempt - uncharged_attempts, so the next attempt is the first
-- charged one again. fail_attempts and die_attempts (sql/tasks.sql) compare
-- attempt - uncharged_attempts - retry_base with max_retries. It is its own
-- column, not uncharged_attempts: those are capped (a circuit breaker's refunds
-- and throttled attempts stop at 10,000), a write-off must not be, and the
-- worker's backoff and children's request ids keep counting every charged
-- attempt of the task's life.
ALTER TABLE tasks ADD COLUMN retry_base integer NOT NULL DEFAULT 0;

-- Dead letters pending in an active redrive (a PENDING item belongs to a
-- RUNNING or PAUSED one: DONE needs none pending, a cancel cancels them): a new
-- redrive leaves them out, so two redrives never push the same task.
CREATE INDEX redrive_items_pending_task_idx ON redrive_items (task_id) WHERE outcome = 1;

-- Retention: finished redrives by when they finished (their items go after the
-- store's retention window, their rows later: sql/redrives.sql).
CREATE INDEX redrives_finished_idx ON redrives (finished_at) WHERE finished_at IS NOT NULL;
