"""Task records as the store tests insert them.

``task`` is a new task "add" of two numbers. ``submitted_task`` also has the
graph fields the gateway sets on submission (``core.codec``): a task that
depends on others waits (PENDING), a task without a parent is its own root.
"""

from __future__ import annotations

from typing import Any

from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids
from taskyard.core.states import TaskState


def task(*, args_json: bytes = b"[1, 2]", **fields: Any) -> tr.TaskRecord:
    """A task "add" with a new id unless ``fields`` name one (``args_json=b""``: no arguments)."""
    fields.setdefault("id", ids.new_task_id())
    fields.setdefault("name", "add")
    return tr.TaskRecord(args_json=args_json, **fields)


def submitted_task(**fields: Any) -> tr.TaskRecord:
    """``task`` as the gateway submits it: PENDING while it depends on others,
    its own root when it has no parent."""
    fields.setdefault("id", ids.new_task_id())
    if fields.get("depends_on"):
        fields.setdefault("state", TaskState.PENDING)
    if not fields.get("parent_id"):
        fields.setdefault("root_id", fields["id"])
    return task(**fields)
