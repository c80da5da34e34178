"""What an attempt's outcome is made of, in a worker: its ids and reference, the
failure and the completion it reports, its timeout and retry budget, and its result
encoded within the message caps."""

from __future__ import annotations

import json
import re
import time
import traceback
from typing import Any

from taskyard.bus.v1 import leases_pb2, task_record_pb2
from taskyard.core import payload, retry
from taskyard.core.config import PoolSettings
from taskyard.v1 import task_pb2
from taskyard.worker_pool import poison, registry

Key = tuple[str, int]
# An encoded JSON text holding a real NUL (PostgreSQL jsonb refuses it).
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# What json.dumps(value, allow_nan=False, separators=(",", ":")) builds on every call.
_RESULT_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def worker_id(pool_id: str, index: int, pid: int) -> str:
    return f"{pool_id}/w{index}:{pid}"


def now_us() -> int:
    return time.time_ns() // 1000


def key_of(record: task_record_pb2.TaskRecord) -> Key:
    return (record.id, record.attempt)


def ref_of(record: task_record_pb2.TaskRecord, worker: str) -> task_record_pb2.AttemptRef:
    return task_record_pb2.AttemptRef(
        task_id=record.id,
        attempt=record.attempt,
        lease_token=record.lease_token,
        at_us=now_us(),
        worker_id=worker,
    )


def failure_of(
    exc: BaseException, attempt: int, *, type_name: str | None = None, message: str | None = None
) -> task_pb2.TaskFailure:
    # Task-controlled text: a NUL would make the store refuse the whole report
    # (PostgreSQL text), a lone surrogate would fail the protobuf assignment.
    try:
        text = str(exc) if message is None else message
    except Exception as err:  # a broken __str__ must not lose the failure
        text = f"<unprintable {type(exc).__name__}: {type(err).__name__}>"
    return task_pb2.TaskFailure(
        type=poison.storable(type_name or type(exc).__name__),
        message=poison.storable(text),
        traceback=poison.storable("".join(traceback.format_exception(exc))),
        attempt=attempt,
    )


def charged_attempt(record: task_record_pb2.TaskRecord) -> int:
    """The attempt as the retry budget counts it: re-runs that spent no retry
    (an attempt never confirmed started, drained or spared) do not move it, so
    the backoff stays the one documented for the n-th charged attempt."""
    return max(1, record.attempt - record.uncharged_attempts)


def outcome_of(completion: leases_pb2.Completion, charged: int) -> str:
    """How an attempt ended, as its span and run-time metric name it: ``retry`` only
    when another attempt follows, so the last failing one is a ``failure``. The
    store decides with the same rule (sql/tasks.sql fail_attempts): retryable, and
    the ``charged`` attempt within the budget the completion carries."""
    if completion.success:
        return "success"
    if completion.cancel_step:
        return "cancelled"
    if completion.failure.throttled:  # spends no retry (sql/tasks.sql fail_attempts)
        return "retry"
    return "retry" if completion.retryable and charged <= completion.max_retries else "failure"


def effective_max_retries(record: task_record_pb2.TaskRecord, default: int) -> int:
    """The record's own budget, else the task's @task(max_retries=...), else ``default``."""
    if record.max_retries >= 0:
        return record.max_retries
    tdef = registry.get(record.name)
    if tdef is not None and tdef.max_retries is not None:
        return tdef.max_retries
    return default


def death_delay_ms(name: str, attempt: int, settings: PoolSettings) -> int:
    """The backoff after a started attempt whose worker died: the task's
    @task(retry_...) over the deployment's policy, as for a failed attempt."""
    tdef = registry.get(name)
    options = tdef.retry if tdef is not None else None
    return retry.delay_ms(None, attempt, options, retry.RetryPolicy.from_settings(settings))


class Cancelled(Exception):
    """Raised by a task body that stops because ``ctx.cancelled`` became true.

    After a cancel request the attempt ends CANCELLED (step FLAG) however the
    body ends; without one, raising it fails the attempt without retry.
    """


def timeout_of(record: task_record_pb2.TaskRecord, default: float) -> float:
    """Seconds an attempt may run: the record's, else @task(timeout=...), else ``default``."""
    if record.timeout_ms > 0:
        return record.timeout_ms / 1000.0
    tdef = registry.get(record.name)
    if tdef is not None and tdef.timeout:
        return tdef.timeout
    return default


def cancelled_completion(step: int, message: str) -> leases_pb2.Completion:
    """The outcome of an attempt a cancel request stopped (the store makes it CANCELLED)."""
    return leases_pb2.Completion(
        success=False,
        cancel_step=step,  # type: ignore[arg-type]
        failure=task_pb2.TaskFailure(type="Cancelled", message=poison.storable(message)),
        retryable=False,
    )


class ResultTooLarge(Exception):
    """The result's JSON is over TASKYARD_MAX_RESULT_BYTES (not retried: it would be again)."""


class ResultTooDeep(Exception):
    """The result nests lists and objects deeper than ``payload.MAX_NESTING``: no
    reader could decode it (not retried: it would be again)."""


def encode_result(value: Any, max_bytes: int = 1024 * 1024) -> bytes:
    """JSON text of a result; TypeError when it is not JSON-serializable."""
    if value is None and max_bytes >= 4:  # most bodies return nothing: no encoder, nothing to check
        return b"null"
    try:
        text = _RESULT_ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"result is not JSON-serializable: {exc}") from exc
    except RecursionError as exc:  # deeper than Python's own encoder goes
        raise ResultTooDeep(f"result {payload.too_deep_message()}") from exc
    if _JSON_NUL.search(text):
        raise TypeError("result contains a NUL character (\\u0000), which JSON storage refuses")
    data = text.encode()
    if len(data) > max_bytes:
        raise ResultTooLarge(
            f"result is {len(data)} bytes of JSON, over the limit of {max_bytes} (TASKYARD_MAX_RESULT_BYTES)"
        )
    if payload.nests_too_deep(text):  # the text: tuples and other sequences nest too
        raise ResultTooDeep(f"result {payload.too_deep_message()}")
    return data
