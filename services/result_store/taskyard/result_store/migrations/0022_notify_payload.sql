-- The NOTIFY of an insert outside the store says so ('inserted'): the store then
-- reads only the new tasks (arrivals.py). A NOTIFY without that payload, as
-- an operator or an older tool sends after changing rows by hand, still makes
-- the store ask the scheduler to read every QUEUED row again.
CREATE OR REPLACE FUNCTION tasks_notify_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  channel text;
BEGIN
  IF coalesce(current_setting('taskyard.origin', true), '') = 'store' THEN
    RETURN NULL;
  END IF;
  SELECT value INTO channel FROM taskyard_config WHERE key = 'notify_channel';
  IF coalesce(channel, '') <> '' THEN
    PERFORM pg_notify(channel, 'inserted');
  END IF;
  RETURN NULL;
END
$$;
