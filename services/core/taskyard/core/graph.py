"""The task graph at the edge: a TaskSpec's ``depends_on`` and idempotency key.

``apply_spec`` validates those fields of one spec into its record (collecting
violations like the rest of ``codec.build_records``). The store then checks
that the dependencies exist and decides PENDING -> QUEUED / CANCELLED (see
``result_store/writes/dependencies.py`` and docs/dependencies.md).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import errors, validation
from taskyard.v1 import task_pb2

if TYPE_CHECKING:
    from taskyard.core.validation import Violation

DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000
# The limits themselves are rules of the record (core/validation.py).
MAX_DEPENDENCIES = validation.MAX_DEPENDENCIES


def apply_spec(
    spec: task_pb2.TaskSpec, rec: task_record_pb2.TaskRecord, path: str, out: list[Violation]
) -> None:
    """Fill ``depends_on`` and the idempotency key of ``rec`` (whose
    ``created_at_us`` is set) from ``spec``; a task with dependencies starts PENDING.

    Only what a record cannot say is checked here; ``validation.check_record``
    checks the rest (how many dependencies, their ids, the key, the window's length).
    """
    deps = spec.depends_on
    if deps:
        if len(deps) > MAX_DEPENDENCIES:
            rec.depends_on.extend(deps)  # refused whole by the rule, unparsed
        else:
            seen: set[str] = set()
            for raw in deps:
                dep = validation.canonical_uuid(raw) or raw
                if dep not in seen:
                    seen.add(dep)
                    rec.depends_on.append(dep)
        # Queued (or scheduled, with an ETA) by the store once all succeed.
        rec.state = task_pb2.TASK_STATE_PENDING

    key = spec.idempotency_key
    if key:
        window_ms = DEFAULT_IDEMPOTENCY_WINDOW_MS
        if spec.HasField("idempotency_window"):
            from taskyard.core import codec

            ms = codec.duration_ms(spec.idempotency_window)
            if ms is None or ms <= 0:
                out.append(
                    validation.Violation(field=f"{path}.idempotency_window", description="must be positive")
                )
            else:
                window_ms = ms
        rec.idempotency_key = key
        # The window runs from acceptance (the record's created_at, the gateway's clock).
        rec.idempotency_expires_at_us = rec.created_at_us + window_ms * 1000
    elif spec.HasField("idempotency_window"):
        out.append(
            validation.Violation(
                field=f"{path}.idempotency_window", description="only meaningful with an idempotency_key"
            )
        )


def single_paths(exc: errors.TaskyardError, field: str) -> errors.TaskyardError:
    """The store's ``tasks[0].x`` field paths as ``task.x`` for a single submission."""
    if not exc.violations:
        return exc
    prefix = "tasks[0]"

    def rename(path: str) -> str:
        return field + path[len(prefix) :] if path.startswith(prefix) else path

    violations = tuple(dataclasses.replace(v, field=rename(v.field)) for v in exc.violations)
    return errors.TaskyardError(exc.code, exc.reason, exc.message.replace(prefix, field), violations)
