"""Enqueue a task in the same transaction as your own write, with asyncpg.

    python examples/transactional/asyncpg_submit.py postgresql://user@host:5432/taskyard

The order row and its task commit together or not at all (docs/transactional-enqueue.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import asyncpg

DSN = sys.argv[1] if len(sys.argv) > 1 else os.environ["DATABASE_URL"]


async def main() -> None:
    conn = await asyncpg.connect(DSN)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item text NOT NULL, task_id uuid)"
        )
        async with conn.transaction():
            order_id = await conn.fetchval("INSERT INTO orders (item) VALUES ($1) RETURNING id", "book")
            task_id = await conn.fetchval(
                "SELECT taskyard_submit($1, $2::jsonb, $3::jsonb, $4::jsonb)",
                "add",
                json.dumps([order_id, 1]),
                json.dumps({}),
                json.dumps({"request_id": f"order-{order_id}", "labels": {"via": "asyncpg"}}),
            )
            await conn.execute("UPDATE orders SET task_id = $1 WHERE id = $2", task_id, order_id)
        print(f"order {order_id} committed with task {task_id}")

        # A bad call raises, and the transaction's own writes roll back with it.
        try:
            async with conn.transaction():
                await conn.execute("INSERT INTO orders (item) VALUES ('never stored')")
                await conn.fetchval("SELECT taskyard_submit('no_such_task')")
        except asyncpg.PostgresError as exc:
            print(f"refused: sqlstate {exc.sqlstate}, reason {exc.detail}, field {exc.hint}")
    finally:
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
