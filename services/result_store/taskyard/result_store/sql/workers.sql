-- The servers registry.

-- name: upsert_workers
INSERT INTO workers AS w (
  pool_id, server_name, max_workers, active_workers, idle_workers, running, is_running,
  task_names, state, rss_bytes, capacity, last_heartbeat
)
SELECT h.pool_id, h.server_name, h.max_workers, h.active_workers, h.idle_workers, h.running,
       h.is_running, ARRAY(SELECT jsonb_array_elements_text(h.task_names::jsonb)), h.state,
       h.rss_bytes, h.capacity, now()
FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::int[], $7::bool[],
            $8::text[], $9::text[], $10::bigint[], $11::int[])
     AS h(pool_id, server_name, max_workers, active_workers, idle_workers, running, is_running,
          task_names, state, rss_bytes, capacity)
ON CONFLICT (pool_id) DO UPDATE SET
  server_name = EXCLUDED.server_name, max_workers = EXCLUDED.max_workers,
  active_workers = EXCLUDED.active_workers, idle_workers = EXCLUDED.idle_workers,
  running = EXCLUDED.running, is_running = EXCLUDED.is_running,
  task_names = EXCLUDED.task_names, state = EXCLUDED.state, rss_bytes = EXCLUDED.rss_bytes,
  capacity = EXCLUDED.capacity, last_heartbeat = now()
RETURNING w.pool_id, ty_us(w.last_heartbeat) AS at_us

-- name: task_names
SELECT DISTINCT n.name
FROM workers w, unnest(w.task_names) AS n(name)
WHERE w.last_heartbeat > now() - $1::bigint * interval '1 millisecond' AND w.is_running
ORDER BY n.name
