"""The task graph at the edge: a TaskSpec's ``depends_on`` and idempotency key.

``apply_spec`` validates those fields of one spec into its record (collecting
violations like the rest of ``codec.build_records``). The store then checks
that the dependencies exist and decides PENDING -> QUEUED / CANCELLED (see
``result_store/dependencies.py`` and docs/dependencies.md).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import errors
from taskyard.v1 import task_pb2

if TYPE_CHECKING:
    from taskyard.core.codec import Violation

# A task waits on at most this many others (one row's depends_on array).
MAX_DEPENDENCIES = 100
MAX_IDEMPOTENCY_KEY_CHARS = 255
DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000
MAX_IDEMPOTENCY_WINDOW_MS = 30 * 24 * 3600 * 1000


def apply_spec(
    spec: task_pb2.TaskSpec, rec: task_record_pb2.TaskRecord, path: str, out: list[Violation]
) -> None:
    """Fill ``depends_on`` and the idempotency key of ``rec`` (whose
    ``created_at_us`` is set) from ``spec``; a task with dependencies starts PENDING."""
    from taskyard.core import codec

    if spec.depends_on:
        if len(spec.depends_on) > MAX_DEPENDENCIES:
            out.append(
                codec.Violation(
                    field=f"{path}.depends_on",
                    description=f"at most {MAX_DEPENDENCIES} dependencies, got {len(spec.depends_on)}",
                )
            )
        else:
            seen: set[str] = set()
            for j, raw in enumerate(spec.depends_on):
                dep = codec.canonical_uuid(raw)
                if dep is None:
                    out.append(
                        codec.Violation(
                            field=f"{path}.depends_on[{j}]",
                            description=f"must be a task id (UUID), got {codec.quote(raw)}",
                        )
                    )
                elif dep not in seen:
                    seen.add(dep)
                    rec.depends_on.append(dep)
        if rec.depends_on:
            # Queued (or scheduled, with an ETA) by the store once all succeed.
            rec.state = task_pb2.TASK_STATE_PENDING

    key = spec.idempotency_key
    if key:
        codec.check_text(out, f"{path}.idempotency_key", key, max_chars=MAX_IDEMPOTENCY_KEY_CHARS)
        window_ms = DEFAULT_IDEMPOTENCY_WINDOW_MS
        if spec.HasField("idempotency_window"):
            ms = codec.duration_ms(spec.idempotency_window)
            if ms is None or ms <= 0:
                out.append(
                    codec.Violation(field=f"{path}.idempotency_window", description="must be positive")
                )
            elif ms > MAX_IDEMPOTENCY_WINDOW_MS:
                out.append(
                    codec.Violation(field=f"{path}.idempotency_window", description="must be at most 30 days")
                )
            else:
                window_ms = ms
        rec.idempotency_key = key
        # The window runs from acceptance (the record's created_at, the gateway's clock).
        rec.idempotency_expires_at_us = rec.created_at_us + window_ms * 1000
    elif spec.HasField("idempotency_window"):
        out.append(
            codec.Violation(
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
