"""A worker stream's words as the bus's, and the bus's as the stream's.

A leased record becomes the ``Attempt`` a worker is sent; what the worker says of it
becomes the ``Completion`` or ``Death`` a pool would report. The task's own timeout and
retries win; else the stream's Hello declared them for the function; else the suite's
defaults apply, as for a Python ``@task``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable

from taskyard.bus.v1 import leases_pb2, task_record_pb2
from taskyard.core import payload
from taskyard.core.config import GatewaySettings
from taskyard.core.retry import RetryPolicy
from taskyard.gateway.remote_attempts import Held, bus_ref
from taskyard.v1 import task_pb2
from taskyard.worker.v1 import worker_service_pb2 as wpb


class Terms:
    def __init__(self, settings: GatewaySettings, declarations: Iterable[wpb.TaskDeclaration]) -> None:
        self._settings = settings
        self._declarations = {d.name: d for d in declarations}
        self._policy = RetryPolicy.from_settings(settings)
        self._rng = random.Random()

    def timeout_ms(self, rec: task_record_pb2.TaskRecord) -> int:
        if rec.timeout_ms:
            return int(rec.timeout_ms)
        decl = self._declarations.get(rec.name)
        if decl is not None and decl.HasField("timeout"):
            return decl.timeout.ToMilliseconds()
        return 0

    def max_retries(self, rec: task_record_pb2.TaskRecord) -> int:
        if rec.max_retries >= 0:
            return int(rec.max_retries)
        decl = self._declarations.get(rec.name)
        if decl is not None and decl.HasField("max_retries"):
            return decl.max_retries
        return self._settings.max_retries

    def _retry_delay_ms(self, attempt: int) -> int:
        return int(self._policy.delay(attempt, self._rng) * 1000)

    def attempt(self, held: Held) -> wpb.Attempt:
        rec = held.record
        a = wpb.Attempt(
            task_id=rec.id,
            name=rec.name,
            attempt=rec.attempt,
            lease_token=rec.lease_token,
            priority=rec.priority,
            queue=rec.queue,
            parent_id=rec.parent_id,
            root_id=rec.root_id,
            tenant=rec.tenant,
            # As the store charges them (a redrive's fresh budget aside).
            retries_left=max(0, self.max_retries(rec) - (rec.attempt - rec.uncharged_attempts)),
        )
        payload.json_to_list(rec.args_json or b"[]", a.args)
        payload.json_to_struct(rec.kwargs_json or b"{}", a.kwargs)
        a.trace_headers.update(rec.trace_headers)
        a.labels.update(rec.labels)
        timeout_ms = self.timeout_ms(rec)
        if timeout_ms:
            a.deadline.FromMicroseconds(int(time.time() * 1e6) + timeout_ms * 1000)
        return a

    def completion(
        self,
        held: Held,
        pool_id: str,
        *,
        success: bool,
        result_json: bytes,
        failure: wpb.Failure | None,
        cancelled: bool,
    ) -> leases_pb2.Completion:
        rec = held.record
        c = leases_pb2.Completion(
            ref=bus_ref(held, pool_id),
            success=success,
            result_json=result_json,
            started_at_us=held.started_at_us,
            max_retries=self.max_retries(rec),
        )
        if cancelled:
            c.cancel_step = task_pb2.CANCEL_STEP_FLAG
        if failure is not None:
            c.failure.CopyFrom(
                task_pb2.TaskFailure(
                    type=failure.type or "Error",
                    message=failure.message,
                    traceback=failure.traceback,
                    attempt=rec.attempt,
                )
            )
            c.retryable = failure.retryable
            if failure.HasField("retry_delay"):
                c.retry_delay_ms = failure.retry_delay.ToMilliseconds()
            else:
                c.retry_delay_ms = self._retry_delay_ms(rec.attempt)
        return c

    def death(self, held: Held, pool_id: str, cancel_step: int = 0) -> leases_pb2.Death:
        rec = held.record
        return leases_pb2.Death(
            ref=bus_ref(held, pool_id),
            started=held.started,
            retry_delay_ms=self._retry_delay_ms(rec.attempt),
            max_retries=self.max_retries(rec),
            cancel_step=cancel_step,  # type: ignore[arg-type]
            max_rescues=self._settings.max_rescues,
        )


def late_completion(outcome: wpb.Outcome, pool_id: str) -> leases_pb2.Completion:
    """An outcome whose lease was revoked: the store refuses it and counts it on the task."""
    ref = outcome.ref
    return leases_pb2.Completion(
        ref=task_record_pb2.AttemptRef(
            task_id=ref.task_id, attempt=ref.attempt, lease_token=ref.lease_token, worker_id=pool_id
        ),
        success=outcome.WhichOneof("outcome") == "result",
        result_json=outcome_json(outcome),
        revoked=True,
    )


def outcome_json(outcome: wpb.Outcome) -> bytes:
    return payload.dumps(payload.value_to_python(outcome.result)) if outcome.HasField("result") else b""
