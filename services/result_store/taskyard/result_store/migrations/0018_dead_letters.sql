-- Taskyard schema: dead letters and the fingerprints of failures (FailureService).
--
-- A task whose failure is final (retries spent, quarantined after its worker
-- died under it too often, or a failure marked not retryable) is a dead letter:
-- it stays FAILURE with a reason (taskyard.v1.DeadLetterReason's number), and
-- the retention purge leaves it until a redrive or PurgeDeadLetters takes it.
-- A cancel is never a dead letter. Failures written before this migration have
-- no fingerprint and their tasks no reason: they age out as before.
--
-- Every failure has a fingerprint: its type, its message with quoted values,
-- ids and numbers masked, and the innermost frame of the task's own code. The
-- functions below compute it in the statement that writes the failure (no extra
-- round trip), so every writer of a failure (a pool in any language, the rescue
-- of a lapsed lease) gets the same one.

-- A failure's message as its fingerprint reads it: cut at 1024 characters, then
-- quoted values, UUIDs, hex ids (0x..., or 8+ hex digits with a digit and a
-- letter) and numbers replaced by placeholders, in that order (a number inside
-- a quoted value or an id goes with it). A quote opening a value follows no
-- letter or digit, so an apostrophe ("can't") opens nothing.
CREATE FUNCTION ty_failure_mask(message text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    left(coalesce(message, ''), 1024),
    '(?<![[:alnum:]_])''[^''\n]*''', '''<s>''', 'g'),
    '(?<![[:alnum:]_])"[^"\n]*"', '"<s>"', 'g'),
    '[[:xdigit:]]{8}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{12}', '<uuid>', 'g'),
    '\m0[xX][[:xdigit:]]+\M', '<hex>', 'g'),
    '\m(?=[[:xdigit:]]*[0-9])(?=[[:xdigit:]]*[a-fA-F])[[:xdigit:]]{8,}\M', '<hex>', 'g'),
    '[0-9]+([.][0-9]+)?', '<n>', 'g')
$$;

-- The innermost frame of the task's own code in a Python traceback, as
-- "file:function" (the file's name without its directory or .py: the same task
-- deployed under another path keeps its groups; line numbers are left out for
-- the same reason). Frames of installed packages (site-packages, dist-packages),
-- of the standard library, of frozen or generated modules ("<frozen ...>") and
-- of taskyard's own worker and core packages are skipped. Only the last 16 KiB
-- are read: the innermost frames are at the end, also of a chained traceback.
-- '' when no frame is the task's own (no traceback: a worker that died).
CREATE FUNCTION ty_failure_frame(traceback text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce((
    SELECT regexp_replace(regexp_replace(f.m[1], '^.*[/\\]', ''), '[.]pyw?$', '') || ':' || btrim(f.m[2])
    FROM regexp_matches(right(coalesce(traceback, ''), 16384),
                        'File "([^"\n]+)", line [0-9]+, in ([^\n]+)', 'g') WITH ORDINALITY AS f(m, i)
    WHERE f.m[1] !~* '[/\\](site|dist)-packages[/\\]'
      AND f.m[1] !~* '[/\\]lib(64)?[/\\]python[0-9][0-9.]*[/\\]'
      AND f.m[1] !~ '\\Lib\\'
      AND f.m[1] !~ '[/\\]taskyard[/\\](worker_pool|core)[/\\]'
      AND f.m[1] !~ '^<'
    ORDER BY f.i DESC
    LIMIT 1), '')
$$;

-- A failure group: the same for a queue, task name and fingerprint (the type,
-- masked message and frame), 16 hex digits.
CREATE FUNCTION ty_failure_group(queue text, name text, type text, masked text, frame text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT left(md5(coalesce(queue, '') || chr(31) || coalesce(name, '') || chr(31)
                  || md5(coalesce(type, '') || chr(31) || coalesce(masked, '') || chr(31)
                         || coalesce(frame, ''))), 16)
$$;

-- The task's dead-letter reason (0 = not a dead letter), the group of its last
-- failure, and the redrive that re-queued it last (0019_redrives.sql) with the
-- failed attempt it took it from.
ALTER TABLE tasks
  ADD COLUMN dead_letter_reason smallint NOT NULL DEFAULT 0,
  ADD COLUMN failure_group text,
  ADD COLUMN redrive_id uuid,
  ADD COLUMN redriven_from_attempt integer NOT NULL DEFAULT 0;

-- Each failure's group and the parts of its fingerprint (its type is the row's
-- type), and the redrive that re-queued the task from it.
ALTER TABLE task_failures
  ADD COLUMN group_id text NOT NULL DEFAULT '',
  ADD COLUMN masked_message text NOT NULL DEFAULT '',
  ADD COLUMN frame text NOT NULL DEFAULT '',
  ADD COLUMN redrive_id uuid;

-- Dead letters, newest failure first (ListFailures' order), and by group
-- (ListFailureGroups, a group's filter). Partial: a live task pays nothing.
CREATE INDEX tasks_dead_letters_idx ON tasks (finished_at DESC, id DESC) WHERE dead_letter_reason > 0;
CREATE INDEX tasks_dead_letter_groups_idx ON tasks (failure_group, finished_at DESC, id DESC)
  WHERE dead_letter_reason > 0;
-- Whether a group was ever seen (an unknown group is NOT_FOUND).
CREATE INDEX task_failures_group_idx ON task_failures (group_id) WHERE group_id <> '';
