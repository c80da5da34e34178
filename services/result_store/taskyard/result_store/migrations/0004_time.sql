-- Taskyard schema, retries in time: when each failed attempt's successor was due.
-- task_failures.created_at is when the attempt failed (the failing statement's
-- now()); retry_at = created_at + the backoff chosen for it, NULL when the
-- failure was the last one. GetTask returns both (TaskFailure.failed_at/retry_at).
ALTER TABLE task_failures ADD COLUMN retry_at timestamptz;
