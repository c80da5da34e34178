"""One new task as the insert statements take it (``insert_tasks*`` in sql/tasks.sql)."""

from __future__ import annotations

from typing import NamedTuple

# The depends_on literal of a row without dependencies (most rows).
NO_DEPENDENCIES = "{}"


class InsertRow(NamedTuple):
    """A checked and normalized insert record (``insert_checks.validate_insert``).

    A tuple underneath: as cheap to build and read as one, and its fields, in
    order, are the columns the insert statements unnest (each statement
    parameter is named as its field)."""

    id: str
    name: str
    args: str
    kwargs: str
    priority: int
    queue: str
    timeout_ms: int
    max_retries: int
    request_id: str
    parent_id: str | None
    root_id: str | None
    labels: str
    # The state's name (QUEUED, PENDING or SCHEDULED).
    state: str
    attempt: int
    created_at_us: int
    run_at_us: int
    trace_headers: str
    # The dependencies as one array literal ("{id,id}"; "{}" for none).
    depends_on: str
    idempotency_key: str
    idempotency_expires_at_us: int
    # Flow control (TaskRecord.flow): the serialized FlowControl and the names of
    # the limits it uses as one array literal; None, None for a task without it
    # (most rows: a batch of such rows sends no element of either, inserts.py).
    flow: bytes | None = None
    limit_names: str | None = None
    # Whose task it is ("" the default tenant): the record's, a child's parent's,
    # a schedule run's schedule's (inserts.py, schedules.py).
    tenant: str = ""

    @property
    def has_dependencies(self) -> bool:
        return self.depends_on != NO_DEPENDENCIES

    def dependencies(self) -> list[str]:
        return [d for d in self.depends_on.strip("{}").split(",") if d]


# The fields sent as one array literal each (arrays.text_array): plain text
# that asyncpg's array encoder would otherwise check an element at a time.
TEXT_FIELDS = ("name", "queue", "request_id", "state", "idempotency_key", "tenant")
