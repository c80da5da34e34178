"""The clients a generator or probe process drives: Taskyard through gRPC (the sync API's
futures, answered on gRPC's own threads, or asyncio) and Celery through Redis.

A sync client's ``send`` returns at once; ``done(ok, why)`` is called later, from
whichever thread saw the end (gRPC's, or the Redis reader's)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable
from typing import Any, Protocol

import grpc
import grpc.aio
from google.protobuf import duration_pb2

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

from .plan import Target

Done = Callable[[bool, str], None]
TASK = "noop"
WAIT_SECONDS = 30  # the server-side wait of WaitTask / RunTask
CALL_TIMEOUT = 40.0  # each call's own deadline, past the wait
# Celery's Redis backend sets the result under this key and publishes it on a channel of
# the same name (celery.backends.redis: RedisBackend._set).
CELERY_RESULT_PREFIX = "celery-task-meta-"


class SyncClient(Protocol):
    def send(self, done: Done) -> None: ...
    def one(self) -> tuple[bool, str]: ...  # blocking, for the probe
    def close(self) -> None: ...


def _final(reply: task_service_pb2.WaitTaskResponse | task_service_pb2.RunTaskResponse) -> tuple[bool, str]:
    """Ok when the task ended SUCCESS within the wait."""
    if (isinstance(reply, task_service_pb2.WaitTaskResponse) and reply.timed_out) or (
        isinstance(reply, task_service_pb2.RunTaskResponse) and not reply.final
    ):
        return False, f"task {reply.task.id} not final after {WAIT_SECONDS} s"
    if reply.task.state != task_pb2.TASK_STATE_SUCCESS:
        return False, f"task {reply.task.id} ended {task_pb2.TaskState.Name(reply.task.state)}"
    return True, ""


def _failed(exc: BaseException) -> tuple[bool, str]:
    if isinstance(exc, grpc.RpcError):
        return False, f"{exc.code().name}: {exc.details()}"
    return False, repr(exc)


class _Requests:
    """The messages every call sends, made once."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        spec = task_pb2.TaskSpec(name=TASK)
        self.submit = task_service_pb2.SubmitTaskRequest(task=spec)
        self.run = task_service_pb2.RunTaskRequest(
            task=spec, timeout=duration_pb2.Duration(seconds=WAIT_SECONDS)
        )

    def wait(self, task_id: str) -> task_service_pb2.WaitTaskRequest:
        return task_service_pb2.WaitTaskRequest(
            id=task_id, timeout=duration_pb2.Duration(seconds=WAIT_SECONDS)
        )


class TaskyardSync:
    """The sync API: ``future()`` calls, chained in their callbacks, no thread of ours per call."""

    def __init__(self, target: Target) -> None:
        self._requests = _Requests(target.mode)
        self._channels = [grpc.insecure_channel(target.address) for _ in range(target.channels)]
        self._stubs = [task_service_pb2_grpc.TaskServiceStub(c) for c in self._channels]
        self._turn = itertools.count()

    def _stub(self) -> Any:
        return self._stubs[next(self._turn) % len(self._stubs)]

    def send(self, done: Done) -> None:
        stub = self._stub()
        if self._requests.mode == "runtask":
            stub.RunTask.future(self._requests.run, timeout=CALL_TIMEOUT).add_done_callback(
                lambda f: done(*self._ended(f))
            )
            return

        def submitted(f: Any) -> None:
            try:
                reply = f.result()
            except Exception as exc:
                done(*_failed(exc))
                return
            stub.WaitTask.future(self._requests.wait(reply.task.id), timeout=CALL_TIMEOUT).add_done_callback(
                lambda w: done(*self._ended(w))
            )

        stub.SubmitTask.future(self._requests.submit, timeout=CALL_TIMEOUT).add_done_callback(submitted)

    @staticmethod
    def _ended(f: Any) -> tuple[bool, str]:
        try:
            return _final(f.result())
        except Exception as exc:
            return _failed(exc)

    def one(self) -> tuple[bool, str]:
        stub = self._stub()
        try:
            if self._requests.mode == "runtask":
                return _final(stub.RunTask(self._requests.run, timeout=CALL_TIMEOUT))
            reply = stub.SubmitTask(self._requests.submit, timeout=CALL_TIMEOUT)
            return _final(stub.WaitTask(self._requests.wait(reply.task.id), timeout=CALL_TIMEOUT))
        except grpc.RpcError as exc:
            return _failed(exc)

    def close(self) -> None:
        for channel in self._channels:
            channel.close()


class TaskyardAio:
    """grpc.aio: one coroutine per task. Made inside the running loop (its channels bind to it)."""

    def __init__(self, target: Target) -> None:
        self._requests = _Requests(target.mode)
        self._channels = [grpc.aio.insecure_channel(target.address) for _ in range(target.channels)]
        self._stubs = [task_service_pb2_grpc.TaskServiceStub(c) for c in self._channels]
        self._turn = itertools.count()

    async def one(self) -> tuple[bool, str]:
        stub: Any = self._stubs[next(self._turn) % len(self._stubs)]
        try:
            if self._requests.mode == "runtask":
                return _final(await stub.RunTask(self._requests.run, timeout=CALL_TIMEOUT))
            reply = await stub.SubmitTask(self._requests.submit, timeout=CALL_TIMEOUT)
            return _final(await stub.WaitTask(self._requests.wait(reply.task.id), timeout=CALL_TIMEOUT))
        except grpc.RpcError as exc:
            return _failed(exc)

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(grace=None)


class CelerySync:
    """apply_async on one producer connection, with task ids of our own; the results come
    on one Redis pub/sub connection that subscribed to this process's ids only (a pattern),
    read by a thread."""

    def __init__(self, target: Target, prefix: str) -> None:
        # Imported here: the extras are optional and this module is also Taskyard's.
        from _compare.celery import celery_app
        from _compare.extras import redis_module

        self._prefix = prefix
        self._ids = itertools.count()
        self._stack = contextlib.ExitStack()
        self.app, self.noop = celery_app(target.address)
        self._producer = self._stack.enter_context(self.app.producer_or_acquire())
        self._waiting: dict[str, Done] = {}
        self._redis = redis_module().Redis.from_url(f"{target.address}/1")
        self._pubsub = self._redis.pubsub()
        pattern = f"{CELERY_RESULT_PREFIX}{prefix}-*"
        self._pubsub.psubscribe(pattern)
        # Sends start only once Redis has taken the subscription, so no result is missed.
        while (message := self._pubsub.get_message(timeout=10)) is not None:
            if message["type"] == "psubscribe":
                break
        else:
            raise SystemExit(f"celery: Redis did not confirm the subscription to {pattern}")
        self._reader = threading.Thread(target=self._read, name="celery-results", daemon=True)
        self._reader.start()

    def send(self, done: Done) -> None:
        task_id = f"{self._prefix}-{next(self._ids)}"
        self._waiting[task_id] = done
        try:
            self.noop.apply_async(task_id=task_id, producer=self._producer)
        except Exception as exc:
            self._waiting.pop(task_id, None)
            done(False, repr(exc))

    def _read(self) -> None:
        skip = len(CELERY_RESULT_PREFIX)
        with contextlib.suppress(Exception):  # the connection closed under it at the end
            for message in self._pubsub.listen():
                if message["type"] != "pmessage":
                    continue
                done = self._waiting.pop(message["channel"][skip:].decode(), None)
                if done is not None:
                    ok = b'"SUCCESS"' in message["data"]
                    done(ok, "" if ok else message["data"][:200].decode(errors="replace"))

    def one(self) -> tuple[bool, str]:
        try:
            self.noop.delay().get(timeout=WAIT_SECONDS)
        except Exception as exc:
            return False, repr(exc)
        return True, ""

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._pubsub.close()
        self._redis.close()
        self._stack.close()
        self.app.close()


def sync_client(target: Target, prefix: str) -> SyncClient:
    if target.system == "celery":
        return CelerySync(target, prefix)
    return TaskyardSync(target)
