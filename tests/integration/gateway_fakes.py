"""Test doubles for the gateway: a fake scheduler (the four lanes) and a fake
result-store answering the bus requests over real NNG REP sockets, a PUB for
events, a discovery hub and a fake worker-pool announcement.

Everything records what it received, so tests can assert that a bad request
never reached a lane.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pynng
from google.protobuf.message import Message
from support.waiting import wait_until_async

from taskyard.bus.v1 import (
    dispatch_pb2,
    envelope_pb2,
    event_pb2,
    failures_pb2,
    flow_pb2,
    logs_pb2,
    pools_pb2,
    task_record_pb2,
    tasks_pb2,
)
from taskyard.core import contract, discovery, errors, ids, rpc, transport
from taskyard.core.config import Settings
from taskyard.core.errors import FieldViolation
from taskyard.core.priority import LANES, Priority
from taskyard.gateway.server import Gateway
from taskyard.v1 import limit_pb2, task_pb2, task_service_pb2_grpc

# The FailureService's store methods: the fake records each request and answers empty.
FAILURE_METHODS: tuple[contract.Method[Any, Any], ...] = (
    contract.STORE_FAILURE_GROUPS,
    contract.STORE_DEAD_LETTERS,
    contract.STORE_PURGE_DEAD_LETTERS,
    contract.STORE_REDRIVE_CREATE,
    contract.STORE_REDRIVE_CONTROL,
    contract.STORE_REDRIVE_LIST,
)
FINAL = {task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED}
Envelope = envelope_pb2.Envelope
Rq = TypeVar("Rq", bound=Message)


class FakeBackend:
    """Scheduler lanes + result-store + event PUB + discovery hub, all on real NNG sockets."""

    def __init__(self, settings: Settings, *, pool_names: tuple[str, ...] = ("add", "echo")) -> None:
        self.settings = settings
        self.tasks: dict[str, task_record_pb2.TaskRecord] = {}
        self.by_request_id: dict[str, str] = {}
        self.store_names: list[str] = []
        self.submits: dict[Priority, list[dispatch_pb2.SubmitRequest]] = {p: [] for p in LANES}
        # Each request the store's methods were asked, by its method's kind.
        self.store_requests: list[tuple[int, Any]] = []
        # STORE_FAILURES' answer (GetTask's failed attempts, ExplainTask's counts).
        self.failures_reply = tasks_pb2.GetFailuresReply()
        self.lane_gate: asyncio.Event | None = None  # when set up, lanes wait on it
        self.lane_entered = asyncio.Event()
        self.fail_lane: errors.TaskyardError | None = None
        # Awaited before each task names reply; it may raise (a store's refusal) or wait.
        self.on_names: Callable[[pools_pb2.TaskNamesRequest], Awaitable[None]] | None = None
        self.pool_names = pool_names
        # Flow control: the store's limits and version, the leader's FLOW_GATES
        # answer (None: it refuses, as a scheduler without flow control would).
        self.limits: dict[str, limit_pb2.Limit] = {}
        self.limit_version = 0
        self.flow_gates: flow_pb2.FlowGatesReply | None = None
        # Limit uses each task name declares (the scheduler adds them at submit).
        self.declared: dict[str, list[limit_pb2.LimitUse]] = {}
        self.gate_requests: list[flow_pb2.FlowGatesRequest] = []
        # Each task's log lines (offsets 0, 1, ...); a task with a log is never final here.
        self.logs: dict[str, list[str]] = {}
        mmb = settings.max_message_bytes
        self._responders = [
            rpc.Responder(
                settings.lane_listen_address(p),
                [
                    rpc.serve(contract.SUBMIT, self._lane_handler(p)),
                    rpc.serve(contract.FLOW_GATES, self._gates),
                ],
                max_message_bytes=mmb,
                concurrency=8,
            )
            for p in LANES
        ]
        self._responders.append(
            rpc.Responder(
                settings.store_listen_address,
                [
                    rpc.serve(contract.STORE_GET, self._get),
                    rpc.serve(contract.STORE_LIST, self._list),
                    rpc.serve(contract.STORE_CANCEL, self._cancel),
                    rpc.serve(contract.STORE_TASK_NAMES, self._names),
                    # GetTask reads every failed attempt alongside the record.
                    rpc.serve(contract.STORE_FAILURES, self._failures),
                    rpc.serve(contract.STORE_LIMITS, self._read_limits),
                    rpc.serve(contract.STORE_LIMIT_CHANGE, self._change_limit),
                    rpc.serve(contract.STORE_GET_LOGS, self._get_logs),
                    rpc.serve(contract.STORE_HEARTBEAT, self._heartbeat),
                    # FailureService: recorded, answered empty (tests check what arrived).
                    *(rpc.serve(m, self._failure_request(m)) for m in FAILURE_METHODS),
                ],
                max_message_bytes=mmb,
                concurrency=8,
            )
        )
        self.pub: Any = transport.open_socket(
            pynng.Pub0, max_message_bytes=mmb, listen=settings.events_listen_address
        )
        self.hub = discovery.Hub(settings.discovery_listen_address)
        self.pool_id = ids.new_instance_id("worker_pool")
        self.pool = discovery.Peer(
            settings.discovery_address,
            lambda: dispatch_pb2.Announcement(
                service="worker_pool", instance_id=self.pool_id, task_names=list(self.pool_names), capacity=4
            ),
            interval=settings.announce_interval,
        )
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for r in self._responders:
            self._tasks.append(loop.create_task(r.serve()))
        self._tasks.append(loop.create_task(self.hub.run()))
        self._tasks.append(loop.create_task(self.pool.run()))

    async def close(self) -> None:
        for r in self._responders:
            r.close()
        self.pub.close()
        self.hub.close()
        self.pool.close()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):
                await t

    # --- helpers for tests ------------------------------------------------
    @property
    def submitted(self) -> list[task_record_pb2.TaskRecord]:
        return [rec for reqs in self.submits.values() for req in reqs for rec in req.tasks]

    def lane_requests(self) -> int:
        return sum(len(v) for v in self.submits.values())

    def store_asked(self, method: contract.Method[Rq, Any]) -> list[Rq]:
        """The requests of ``method`` the store was asked, in order."""
        return [req for kind, req in self.store_requests if kind == method.kind]

    def put(self, rec: task_record_pb2.TaskRecord) -> None:
        self.tasks[rec.id] = rec

    def set_state(self, task_id: str, state: int, *, result_json: bytes = b"") -> None:
        rec = self.tasks[task_id]
        rec.state = state  # type: ignore[assignment]
        if result_json:
            rec.result_json = result_json
        rec.finished_at_us = time.time_ns() // 1000

    async def publish(self, *events: event_pb2.Event) -> None:
        data = transport.RESULT_EVENTS_TOPIC + contract.EVENTS.encode(event_pb2.EventBatch(events=events))
        await self.pub.asend(data)

    # --- lane ---------------------------------------------------------------
    def _lane_handler(self, priority: Priority) -> Any:
        async def handle(req: dispatch_pb2.SubmitRequest, env: Envelope) -> dispatch_pb2.SubmitReply:
            self.submits[priority].append(req)
            self.lane_entered.set()
            if self.lane_gate is not None:
                await self.lane_gate.wait()
            if self.fail_lane is not None:
                raise self.fail_lane
            reply = dispatch_pb2.SubmitReply()
            for rec in req.tasks:
                assert int(rec.priority) == int(priority), "record sent to the wrong lane"
                existing = self.by_request_id.get(rec.request_id) if rec.request_id else None
                if existing is not None:
                    old = self.tasks[existing]
                    reply.tasks.add(id=old.id, state=old.state, created=False, priority=old.priority)
                    continue
                stored = task_record_pb2.TaskRecord()
                stored.CopyFrom(rec)
                # The limits its name declares, added as the scheduler adds them.
                stored.flow.uses.extend(self.declared.get(rec.name, ()))
                if not stored.flow.uses and not stored.flow.fairness_key:
                    stored.ClearField("flow")
                self.tasks[rec.id] = stored
                if rec.request_id:
                    self.by_request_id[rec.request_id] = rec.id
                reply.tasks.add(
                    id=rec.id,
                    state=rec.state,
                    created=True,
                    priority=rec.priority,
                    name=rec.name,
                    queue=rec.queue,
                )
                if stored.HasField("flow"):
                    reply.tasks[-1].flow.CopyFrom(stored.flow)
            return reply

        return handle

    # --- store -------------------------------------------------------------
    def _failure_request(self, method: contract.Method[Any, Any]) -> Any:
        async def handle(req: Any, env: Envelope) -> Any:
            self.store_requests.append((method.kind, req))
            if method is contract.STORE_REDRIVE_CONTROL:
                return failures_pb2.RedriveControlReply(redrive={"id": req.id})
            return method.reply()

        return handle

    async def _get(self, req: tasks_pb2.GetTasksRequest, env: Envelope) -> tasks_pb2.GetTasksReply:
        self.store_requests.append((contract.STORE_GET.kind, req))
        return tasks_pb2.GetTasksReply(tasks=[self.tasks[i] for i in req.ids if i in self.tasks])

    async def _failures(self, req: tasks_pb2.GetFailuresRequest, env: Envelope) -> tasks_pb2.GetFailuresReply:
        self.store_requests.append((contract.STORE_FAILURES.kind, req))
        return self.failures_reply

    async def _list(self, req: tasks_pb2.ListTasksRequest, env: Envelope) -> tasks_pb2.ListTasksReply:
        self.store_requests.append((contract.STORE_LIST.kind, req))
        rows = sorted(self.tasks.values(), key=lambda r: r.id, reverse=True)
        if req.states:
            rows = [r for r in rows if r.state in req.states]
        if req.name:
            rows = [r for r in rows if r.name == req.name]
        if req.cursor:
            if not req.cursor.startswith("c:"):
                raise errors.TaskyardError(
                    errors.Code.INVALID_ARGUMENT,
                    "INVALID_PAGE_TOKEN",
                    "malformed page token",
                    (FieldViolation(field="page_token", description="not a token from a previous page"),),
                )
            rows = [r for r in rows if r.id < req.cursor[2:]]
        page = rows[: req.limit]
        more = len(rows) > req.limit
        return tasks_pb2.ListTasksReply(tasks=page, next_cursor=f"c:{page[-1].id}" if more else "")

    async def _cancel(self, req: tasks_pb2.CancelTasksRequest, env: Envelope) -> tasks_pb2.CancelTasksReply:
        self.store_requests.append((contract.STORE_CANCEL.kind, req))
        reply = tasks_pb2.CancelTasksReply()
        for task_id in req.ids:
            rec = self.tasks.get(task_id)
            if rec is None:
                reply.outcomes.add(id=task_id, not_found=True)
                continue
            if rec.state in FINAL:
                reply.outcomes.add(id=task_id, already_final=True)
            elif rec.state == task_pb2.TASK_STATE_RUNNING:
                rec.cancel_requested = True
                reply.outcomes.add(id=task_id, flagged=True)
            else:
                rec.state = task_pb2.TASK_STATE_CANCELLED
                reply.outcomes.add(id=task_id, cancelled=True)
            reply.tasks.append(rec)
        return reply

    async def _gates(self, req: flow_pb2.FlowGatesRequest, env: Envelope) -> flow_pb2.FlowGatesReply:
        self.gate_requests.append(req)
        if self.flow_gates is None:
            raise errors.unavailable("no flow control here")
        return self.flow_gates

    async def _read_limits(self, req: flow_pb2.ReadLimitsRequest, env: Envelope) -> flow_pb2.ReadLimitsReply:
        self.store_requests.append((contract.STORE_LIMITS.kind, req))
        if req.known_version == self.limit_version:
            return flow_pb2.ReadLimitsReply(version=self.limit_version, unchanged=True)
        return flow_pb2.ReadLimitsReply(
            version=self.limit_version, limits=[self.limits[n] for n in sorted(self.limits)]
        )

    async def _change_limit(
        self, req: flow_pb2.ChangeLimitRequest, env: Envelope
    ) -> flow_pb2.ChangeLimitReply:
        """CREATE and DELETE only (what the gateway tests need)."""
        self.store_requests.append((contract.STORE_LIMIT_CHANGE.kind, req))
        if req.op == flow_pb2.LIMIT_OP_CREATE:
            self.put_limit(req.limit)
            return flow_pb2.ChangeLimitReply(limit=req.limit, version=self.limit_version)
        if req.op == flow_pb2.LIMIT_OP_DELETE and self.limits.pop(req.name, None) is not None:
            self.limit_version += 1
            return flow_pb2.ChangeLimitReply(version=self.limit_version)
        raise errors.not_found("limit", req.name)

    def put_limit(self, limit: limit_pb2.Limit) -> None:
        self.limits[limit.name] = limit
        self.limit_version += 1

    async def _get_logs(self, req: logs_pb2.GetLogsRequest, env: Envelope) -> logs_pb2.GetLogsReply:
        lines = self.logs.get(req.task_id)
        if lines is None:
            return logs_pb2.GetLogsReply(found=False)
        reply = logs_pb2.GetLogsReply(found=True, log_seq=len(lines), next_offset=req.from_offset)
        for offset in range(req.from_offset, min(len(lines), req.from_offset + req.limit)):
            reply.logs.add(offset=offset, type="info", message=lines[offset])
            reply.next_offset = offset + 1
        return reply

    async def _heartbeat(self, req: pools_pb2.HeartbeatRequest, env: Envelope) -> pools_pb2.HeartbeatReply:
        return pools_pb2.HeartbeatReply()  # a worker stream's pool beats at its start and end

    async def _names(self, req: pools_pb2.TaskNamesRequest, env: Envelope) -> pools_pb2.TaskNamesReply:
        self.store_requests.append((contract.STORE_TASK_NAMES.kind, req))
        if self.on_names is not None:
            await self.on_names(req)
        return pools_pb2.TaskNamesReply(names=self.store_names)


@dataclasses.dataclass
class GatewayEnv:
    settings: Settings
    backend: FakeBackend
    gateway: Gateway
    channel: grpc.aio.Channel
    stub: task_service_pb2_grpc.TaskServiceStub

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.gateway.port}"


def make_settings(ipc_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "transport": "ipc",
        "ipc_dir": str(ipc_dir),
        "grpc_port": 0,
        "announce_interval": 0.2,
        "request_timeout": 3.0,
    }
    values.update(overrides)
    return Settings(**values)


@contextlib.asynccontextmanager
async def gateway_env(**overrides: Any) -> AsyncIterator[GatewayEnv]:
    """A gateway in this process against fake backends; waits until the pool's names are known."""
    ipc_dir = Path(tempfile.mkdtemp(prefix="tygw-", dir="/tmp"))
    settings = make_settings(ipc_dir, **overrides)
    backend = FakeBackend(settings)
    await backend.start()
    gateway = Gateway(settings)
    await gateway.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{gateway.port}")
    env = GatewayEnv(settings, backend, gateway, channel, task_service_pb2_grpc.TaskServiceStub(channel))
    try:
        await wait_until_async(
            lambda: {"add", "echo"} <= gateway.names.snapshot() and gateway.serving,
            10,
            "the gateway to learn the pool's task names and serve",
        )
        yield env
    finally:
        await channel.close(None)
        await gateway.stop(0.5)
        await backend.close()
        shutil.rmtree(ipc_dir, ignore_errors=True)
