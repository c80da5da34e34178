"""Enqueue a task in the same transaction as your own write, with SQLAlchemy 2 (psycopg 3).

    python examples/transactional/sqlalchemy_submit.py postgresql://user@host:5432/taskyard

The order row and its task commit together or not at all (docs/transactional-enqueue.md).
"""

from __future__ import annotations

import os
import sys

from sqlalchemy import bindparam, create_engine, exc, text
from sqlalchemy.dialects.postgresql import JSONB

DSN = sys.argv[1] if len(sys.argv) > 1 else os.environ["DATABASE_URL"]

SUBMIT = text("SELECT taskyard_submit(:name, :args, :kwargs, :options)").bindparams(
    bindparam("args", type_=JSONB), bindparam("kwargs", type_=JSONB), bindparam("options", type_=JSONB)
)


def main() -> None:
    # The psycopg 3 driver, whatever scheme the URL names.
    engine = create_engine(DSN.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item text NOT NULL, task_id uuid)"
            )
        )
    with engine.begin() as conn:  # one transaction: COMMIT on leaving, ROLLBACK on an error
        order_id = conn.execute(text("INSERT INTO orders (item) VALUES ('book') RETURNING id")).scalar_one()
        task_id = conn.execute(
            SUBMIT,
            {
                "name": "add",
                "args": [order_id, 1],
                "kwargs": {},
                "options": {"request_id": f"order-{order_id}", "labels": {"via": "sqlalchemy"}},
            },
        ).scalar_one()
        conn.execute(text("UPDATE orders SET task_id = :t WHERE id = :o"), {"t": task_id, "o": order_id})
    print(f"order {order_id} committed with task {task_id}")

    # A bad call raises, and the transaction's own writes roll back with it.
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO orders (item) VALUES ('never stored')"))
            conn.execute(SUBMIT, {"name": "no_such_task", "args": [], "kwargs": {}, "options": {}})
    except exc.DBAPIError as error:
        diag = error.orig.diag  # type: ignore[union-attr]
        print(f"refused: sqlstate {diag.sqlstate}, reason {diag.message_detail}, field {diag.message_hint}")
    engine.dispose()


if __name__ == "__main__":
    main()
