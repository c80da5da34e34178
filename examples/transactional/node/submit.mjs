// Enqueue a task in the same transaction as your own write, with node-postgres (pg).
//
//   npm ci && node submit.mjs postgresql://user@host:5432/taskyard
//
// The order row and its task commit together or not at all
// (docs/transactional-enqueue.md).
import pg from "pg";

const client = new pg.Client({ connectionString: process.argv[2] ?? process.env.DATABASE_URL });
await client.connect();
try {
  await client.query(
    "CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item text NOT NULL, task_id uuid)",
  );

  await client.query("BEGIN");
  let orderId, taskId;
  try {
    ({ rows: [{ id: orderId }] } = await client.query(
      "INSERT INTO orders (item) VALUES ($1) RETURNING id",
      ["book"],
    ));
    ({ rows: [{ id: taskId }] } = await client.query(
      "SELECT taskyard_submit($1, $2::jsonb, $3::jsonb, $4::jsonb) AS id",
      [
        "add",
        JSON.stringify([orderId, 1]),
        JSON.stringify({}),
        JSON.stringify({ request_id: `order-${orderId}`, labels: { via: "pg" } }),
      ],
    ));
    await client.query("UPDATE orders SET task_id = $1 WHERE id = $2", [taskId, orderId]);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  }
  console.log(`order ${orderId} committed with task ${taskId}`);

  // A bad call raises, and the transaction's own writes roll back with it.
  await client.query("BEGIN");
  try {
    await client.query("INSERT INTO orders (item) VALUES ('never stored')");
    await client.query("SELECT taskyard_submit('no_such_task')");
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    console.log(`refused: sqlstate ${err.code}, reason ${err.detail}, field ${err.hint}`);
  }
} finally {
  await client.end();
}
