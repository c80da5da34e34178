"""Enqueue a task in the same transaction as your own write, with psycopg 3.

    python examples/transactional/psycopg_submit.py postgresql://user@host:5432/taskyard

The order row and its task commit together or not at all (docs/transactional-enqueue.md).
"""

from __future__ import annotations

import os
import sys

import psycopg
from psycopg.types.json import Jsonb

DSN = sys.argv[1] if len(sys.argv) > 1 else os.environ["DATABASE_URL"]


def main() -> None:
    with psycopg.connect(DSN) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item text NOT NULL, task_id uuid)"
        )
        conn.commit()
        with conn.transaction():
            order = conn.execute("INSERT INTO orders (item) VALUES (%s) RETURNING id", ["book"]).fetchone()
            assert order is not None
            order_id = order[0]
            task = conn.execute(
                "SELECT taskyard_submit(%s, %s, %s, %s)",
                [
                    "add",
                    Jsonb([order_id, 1]),
                    Jsonb({}),
                    Jsonb({"request_id": f"order-{order_id}", "labels": {"via": "psycopg"}}),
                ],
            ).fetchone()
            assert task is not None
            task_id = task[0]
            conn.execute("UPDATE orders SET task_id = %s WHERE id = %s", [task_id, order_id])
        print(f"order {order_id} committed with task {task_id}")

        # A bad call raises, and the transaction's own writes roll back with it.
        try:
            with conn.transaction():
                conn.execute("INSERT INTO orders (item) VALUES ('never stored')")
                conn.execute("SELECT taskyard_submit('no_such_task')")
        except psycopg.Error as exc:
            diag = exc.diag
            print(
                f"refused: sqlstate {diag.sqlstate}, reason {diag.message_detail}, field {diag.message_hint}"
            )


if __name__ == "__main__":
    main()
