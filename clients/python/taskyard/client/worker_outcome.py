"""An attempt's ending as the protocol's ``Outcome``: a body's return value as JSON, or
what it raised as a ``Failure`` (retryable unless ``Fatal``; ``RetryAfter`` sets the
wait)."""

from __future__ import annotations

import asyncio
import json
import traceback

from google.protobuf import struct_pb2

from taskyard.client._types import JSON, value_from_python
from taskyard.client.worker_context import Fatal, RetryAfter
from taskyard.worker.v1 import worker_service_pb2 as pb

# Bounds on what a failure carries, so an outcome always fits the stream's largest message.
MAX_MESSAGE_CHARS = 8 * 1024
MAX_TRACEBACK_CHARS = 64 * 1024


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_outcome(ref: pb.AttemptRef, value: JSON, max_result_bytes: int) -> pb.Outcome:
    """The value as the attempt's result; a value that is not JSON or is over the
    gateway's result limit fails the attempt (not retried: it would fail again)."""
    try:
        size = len(json.dumps(value, separators=(",", ":"), allow_nan=False).encode())
        result = struct_pb2.Value()
        value_from_python(result, value, "result")
    except (TypeError, ValueError) as exc:
        return failure_outcome(ref, _failure("TypeError", f"result is not JSON: {exc}", "", retryable=False))
    if max_result_bytes > 0 and size > max_result_bytes:
        message = f"result is {size} bytes of JSON, over the gateway's limit of {max_result_bytes}"
        return failure_outcome(ref, _failure("ResultTooLarge", message, "", retryable=False))
    return pb.Outcome(ref=ref, result=result)


def exception_outcome(ref: pb.AttemptRef, exc: BaseException, *, timed_out: bool = False) -> pb.Outcome:
    return failure_outcome(ref, failure_of(exc, timed_out=timed_out))


def failure_outcome(ref: pb.AttemptRef, failure: pb.Failure) -> pb.Outcome:
    return pb.Outcome(ref=ref, failure=failure)


def failure_of(exc: BaseException, *, timed_out: bool = False) -> pb.Failure:
    text = "".join(traceback.format_exception(exc))
    if timed_out and isinstance(exc, (asyncio.CancelledError, TimeoutError)):
        return _failure("TimeoutError", "the attempt's timeout passed", text, retryable=True)
    if isinstance(exc, RetryAfter):
        cause = exc.__cause__
        shown = cause if cause is not None else exc
        failure = _failure(type(shown).__name__, str(shown), text, retryable=True)
        failure.retry_delay.FromNanoseconds(int(exc.seconds * 1e9))
        return failure
    return _failure(type(exc).__name__, str(exc), text, retryable=not isinstance(exc, Fatal))


def _failure(kind: str, message: str, text: str, *, retryable: bool) -> pb.Failure:
    return pb.Failure(
        type=kind,
        message=clip(message, MAX_MESSAGE_CHARS),
        traceback=clip(text, MAX_TRACEBACK_CHARS),
        retryable=retryable,
    )
