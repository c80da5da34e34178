-- Taskyard schema, executions: every run of a task body is visible.
-- An attempt that ends without an outcome the store could accept as charged
-- (never confirmed started, stopped by a drain, a bystander of a cancel kill)
-- may still have run its body, so the next lease gets a new attempt number;
-- such attempts are counted apart and do not spend the retry budget
-- (charged attempts = attempt - uncharged_attempts).
ALTER TABLE tasks
  ADD COLUMN uncharged_attempts integer NOT NULL DEFAULT 0 CHECK (uncharged_attempts >= 0),
  -- Outcomes of superseded attempts that fencing refused (each also counted in
  -- taskyard_counters 'late_completions'), and the last such attempt.
  ADD COLUMN late_reports integer NOT NULL DEFAULT 0,
  ADD COLUMN late_attempt integer NOT NULL DEFAULT 0;
