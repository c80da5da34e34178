-- Taskyard schema: failed attempts that stay small, refunds that stop where a
-- redrive or a retry wrote the charges off, and a retention purge that reads only
-- what it may delete (docs/flow-control.md, "Circuit breakers"; docs/failures.md).

-- The attempt a redrive or RetryTasks last started the task again from (its
-- failed attempt; 0: never). retry_base (0021_redrive_budget.sql) wrote off the
-- charges up to it, so a circuit breaker's refund of that attempt or an earlier
-- one, arriving late, gives nothing back (sql/refunds.sql refund_attempts):
-- otherwise the task would get a retry its new budget never spent. An attempt
-- number, not a count of charges: a refund names attempts.
ALTER TABLE tasks ADD COLUMN written_off_attempt integer NOT NULL DEFAULT 0;

-- The retention purge's chunks (sql/queues.sql purge_final): final tasks that
-- are not dead letters, by when they finished. tasks_finished_idx (0002) holds
-- the dead letters too, which retention keeps: with many of them every chunk read
-- and dropped them all again (a sequential scan past 300,000 kept rows per 1,000
-- deleted).
CREATE INDEX tasks_retention_idx ON tasks (finished_at)
  WHERE state IN ('SUCCESS', 'FAILURE', 'CANCELLED') AND dead_letter_reason = 0;
