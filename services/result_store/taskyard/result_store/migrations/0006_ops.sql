-- Taskyard schema, task context: merging a running task's context updates.

-- Apply a patch, a JSON list of [path, value] pairs in order (path: a list of
-- keys), to a context object: intermediate keys become objects as needed, so
-- set_context("a.b.c", 1) works on an empty context and keeps a's other keys.
CREATE FUNCTION taskyard_context_apply(doc jsonb, patch jsonb) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  item jsonb;
  path text[];
  i integer;
BEGIN
  IF doc IS NULL OR jsonb_typeof(doc) <> 'object' THEN
    doc := '{}'::jsonb;
  END IF;
  FOR item IN SELECT value FROM jsonb_array_elements(patch) LOOP
    path := ARRAY(SELECT jsonb_array_elements_text(item -> 0));
    CONTINUE WHEN coalesce(array_length(path, 1), 0) = 0;
    FOR i IN 1 .. array_length(path, 1) - 1 LOOP
      IF jsonb_typeof(doc #> path[1:i]) IS DISTINCT FROM 'object' THEN
        doc := jsonb_set(doc, path[1:i], '{}'::jsonb, true);
      END IF;
    END LOOP;
    doc := jsonb_set(doc, path, item -> 1, true);
  END LOOP;
  RETURN doc;
END $$;

-- RetryTasks picks failed tasks by queue (partial: new tasks never pay for it).
CREATE INDEX tasks_failed_queue_idx ON tasks (queue, finished_at) WHERE state = 'FAILURE';
