-- Taskyard schema: failed attempts a circuit breaker refunds (docs/flow-control.md,
-- "Circuit breakers").
--
-- Whether a failed attempt spent a retry is decided twice. When it is written
-- (sql/tasks.sql fail_attempts): a throttling answer (RetryAfter) spends none,
-- every other failure one. Later, by the leading scheduler, which alone knows
-- its breakers: the failures that opened a breaker and every failure while it
-- is open or half-open are the outage's, not the task's, and are refunded
-- (sql/refunds.sql refund_attempts: tasks.uncharged_attempts + 1). A refund is
-- marked on the failure's row, so an attempt is refunded at most once, whatever
-- is sent again after a restart of the store or of the scheduler.

-- charged: the failure spent a retry when it was written (false: a throttled
-- attempt). refunded_at: when a breaker gave that retry back (NULL: never).
-- Failures written before this migration read as charged and not refunded.
ALTER TABLE task_failures
  ADD COLUMN charged boolean NOT NULL DEFAULT true,
  ADD COLUMN refunded_at timestamptz;
