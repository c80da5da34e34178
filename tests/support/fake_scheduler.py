"""A test double of the scheduler's side of the pool protocol (and of the store's heartbeat port).

It listens where the scheduler and result-store would (REP on the registration
address, SURVEYOR on the survey address, REP on the store address answering
heartbeats and reports) and dials a registered pool's PAIR socket: tests dispatch
attempts over it and read back what the pool reported to the store (custody)
and the slot notices it sent over the PAIR. ``PoolProcess`` runs a real
``python -m taskyard.worker_pool`` against it. Real processes, real NNG sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pynng

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, leases_pb2, pools_pb2, task_record_pb2
from taskyard.core import contract, ids, rpc, transport
from taskyard.core.config import Settings
from taskyard.scheduler import pools
from taskyard.v1 import task_pb2

from .waiting import wait_until_async

Report = dispatch_pb2.PoolReport


def short_ipc_dir() -> str:
    """A short directory for ipc:// sockets (paths are limited to ~107 bytes)."""
    return tempfile.mkdtemp(prefix="ty-", dir="/tmp")


def make_record(
    name: str,
    *args: Any,
    timeout_ms: int = 0,
    attempt: int = 1,
    task_id: str | None = None,
    **kwargs: Any,
) -> task_record_pb2.TaskRecord:
    """A leased attempt as the scheduler would dispatch it."""
    return task_record_pb2.TaskRecord(
        id=task_id or ids.new_task_id(),
        name=name,
        args_json=json.dumps(list(args)).encode(),
        kwargs_json=json.dumps(kwargs).encode(),
        timeout_ms=timeout_ms,
        attempt=attempt,
        lease_token=ids.new_lease_token(),
        state=task_pb2.TASK_STATE_ASSIGNED,
    )


class ReportLog:
    """Everything pools reported, merged, with waits on conditions over it."""

    def __init__(self) -> None:
        # What the pool handed to the store (full results), in arrival order.
        self.reports: list[Report] = []
        # Slot notices sent to the scheduler over the PAIR (refs and free slots only).
        self.notices: list[Report] = []
        self.started: dict[str, task_record_pb2.AttemptRef] = {}
        self.completed: dict[str, leases_pb2.Completion] = {}
        self.released: dict[str, leases_pb2.Release] = {}
        self.died: dict[str, leases_pb2.Death] = {}
        self._changed = asyncio.Condition()

    @property
    def free_slots(self) -> int:
        """free_slots of the latest slot notice (-1 before any)."""
        return self.notices[-1].free_slots if self.notices else -1

    async def add_notice(self, notice: Report) -> None:
        self.notices.append(notice)
        async with self._changed:
            self._changed.notify_all()

    async def add(self, report: Report) -> None:
        self.reports.append(report)
        for ref in report.started:
            self.started[ref.task_id] = ref
        for c in report.completed:
            self.completed[c.ref.task_id] = c
        for r in report.released:
            self.released[r.ref.task_id] = r
        for d in report.died:
            self.died[d.ref.task_id] = d
        async with self._changed:
            self._changed.notify_all()

    async def wait(self, predicate: Callable[[ReportLog], bool], within: float = 10.0) -> None:
        async def until() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: predicate(self))

        try:
            await asyncio.wait_for(until(), within)
        except TimeoutError:
            raise AssertionError(f"condition not met within {within}s; reports: {self.reports}") from None

    async def completion(self, task_id: str, within: float = 10.0) -> leases_pb2.Completion:
        await self.wait(lambda log: task_id in log.completed, within)
        return self.completed[task_id]


class FakeScheduler:
    def __init__(self, settings: Settings, scheduler_id: str = "fake-scheduler-1") -> None:
        self.settings = settings
        self.scheduler_id = scheduler_id
        self.registrations: list[dispatch_pb2.Register] = []
        self.heartbeats: list[pools_pb2.HeartbeatRequest] = []
        self.log = ReportLog()
        self.registered = asyncio.Event()
        self.heartbeat_seen = asyncio.Event()
        self.pair_connected = asyncio.Event()
        self._pair: Any = None
        self._pair_address = ""
        self._tasks: list[asyncio.Task[Any]] = []
        self._reg: rpc.Responder | None = None
        self._store: rpc.Responder | None = None
        self._surveyor: Any = None

    async def start(self) -> FakeScheduler:
        s = self.settings
        os.makedirs(s.ipc_dir, exist_ok=True)
        self._reg = rpc.Responder(
            s.registration_listen_address,
            [rpc.serve(contract.REGISTER, self._on_register)],
            max_message_bytes=s.max_message_bytes,
            concurrency=4,
        )
        self._store = rpc.Responder(
            s.store_listen_address,
            [
                rpc.serve(contract.STORE_HEARTBEAT, self._on_heartbeat),
                rpc.serve(contract.STORE_REPORT, self._on_report),
            ],
            max_message_bytes=s.max_message_bytes,
            concurrency=4,
        )
        self._surveyor = transport.open_socket(
            pynng.Surveyor0, max_message_bytes=s.max_message_bytes, listen=s.survey_listen_address
        )
        self._tasks += [asyncio.create_task(self._reg.serve()), asyncio.create_task(self._store.serve())]
        return self

    async def _on_register(
        self, msg: dispatch_pb2.Register, _env: envelope_pb2.Envelope
    ) -> dispatch_pb2.RegisterReply:
        self.registrations.append(msg)
        if msg.pair_address != self._pair_address:
            self._connect_pair(msg.pair_address)
        self.registered.set()
        return dispatch_pb2.RegisterReply(
            scheduler_id=self.scheduler_id,
            survey_address=self.settings.survey_address,
            lease_ms=int(self.settings.lease_seconds * 1000),
        )

    async def _on_heartbeat(
        self, msg: pools_pb2.HeartbeatRequest, _env: envelope_pb2.Envelope
    ) -> pools_pb2.HeartbeatReply:
        self.heartbeats.append(msg)
        self.heartbeat_seen.set()
        return pools_pb2.HeartbeatReply()

    async def _on_report(
        self, msg: leases_pb2.ReportRequest, _env: envelope_pb2.Envelope
    ) -> leases_pb2.ReportReply:
        await self.log.add(
            Report(started=msg.started, completed=msg.completed, released=msg.released, died=msg.died)
        )
        return leases_pb2.ReportReply()

    def _connect_pair(self, address: str) -> None:
        if self._pair is not None:
            self._pair.close()
        self.pair_connected.clear()
        # The scheduler's own link: sealed, with the hello a pool admits it by.
        sock = pools.open_link(
            address, max_message_bytes=self.settings.max_message_bytes, on_connect=self.pair_connected.set
        )
        self._pair, self._pair_address = sock, address
        self._tasks.append(asyncio.create_task(self._read_pair(sock)))

    async def _read_pair(self, sock: Any) -> None:
        while True:
            try:
                raw = await sock.arecv()
            except pynng.Closed:
                return
            report = contract.POOL_REPORT.open(raw)
            assert report is not None, f"not a pool report: kind {transport.decode(raw).kind}"
            await self.log.add_notice(report)

    async def wait_registered(self, within: float = 30.0) -> dispatch_pb2.Register:
        await asyncio.wait_for(self.registered.wait(), within)
        await asyncio.wait_for(self.pair_connected.wait(), within)
        return self.registrations[-1]

    async def dispatch(self, *records: task_record_pb2.TaskRecord) -> list[task_record_pb2.TaskRecord]:
        assert self._pair is not None, "no pool registered"
        batch = dispatch_pb2.Dispatch(tasks=records)
        await self._pair.asend(contract.DISPATCH.encode(batch))
        return list(records)

    async def survey(
        self, within: float = 1.0, scheduler_id: str | None = None
    ) -> list[dispatch_pb2.SurveyReply]:
        """Send one Survey; collect the replies that come ``within`` seconds."""
        self._surveyor.survey_time = int(within * 1000)
        msg = dispatch_pb2.Survey(scheduler_id=self.scheduler_id if scheduler_id is None else scheduler_id)
        await self._surveyor.asend(contract.SURVEY.encode(msg))
        replies: list[dispatch_pb2.SurveyReply] = []
        while True:
            try:
                raw = await self._surveyor.arecv()
            except pynng.Timeout:
                return replies
            reply = contract.SURVEY.open_answer(raw)
            assert reply is not None, f"not a survey answer: kind {transport.decode(raw).kind}"
            replies.append(reply)

    async def survey_until(
        self, predicate: Callable[[dispatch_pb2.SurveyReply], bool], within: float = 15.0
    ) -> dispatch_pb2.SurveyReply:
        """Survey repeatedly until one pool's reply satisfies ``predicate``."""
        last: list[dispatch_pb2.SurveyReply] = []

        async def matched() -> dispatch_pb2.SurveyReply | None:
            nonlocal last
            last = await self.survey(0.3)
            return next((reply for reply in last if predicate(reply)), None)

        # Each survey already waits its 0.3 s for replies: no pause between them.
        return await wait_until_async(
            matched, within, lambda: f"a survey reply to match (last: {last})", interval=0
        )

    async def close(self) -> None:
        for closable in (self._reg, self._store, self._surveyor, self._pair):
            if closable is not None:
                closable.close()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class PoolProcess:
    """``python -m taskyard.worker_pool`` as a child process, stderr kept in a file."""

    def __init__(
        self, settings: Settings, *, pool_id: str = "", extra_env: dict[str, str] | None = None
    ) -> None:
        self.settings = settings
        self.pool_id = pool_id or f"pool-{os.urandom(3).hex()}"
        self.env = {**os.environ, **settings.to_env(), "TASKYARD_POOL_ID": self.pool_id, **(extra_env or {})}
        self.env.pop("TASKYARD_DATABASE_URL", None)
        self.log_path = Path(settings.ipc_dir) / f"{self.pool_id}.log"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> PoolProcess:
        with open(self.log_path, "wb") as fh:  # noqa: ASYNC230 (opened once, handed to the child)
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "taskyard.worker_pool",
                env=self.env,
                stderr=fh,
                stdout=fh,
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    async def wait(self, within: float) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), within)

    async def stop(self, within: float = 15.0) -> int | None:
        if self.proc is None or self.proc.returncode is not None:
            return None if self.proc is None else self.proc.returncode
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        try:
            return await self.wait(within)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            return await self.wait(5)


def pool_settings(ipc_dir: str, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "transport": "ipc",
        "ipc_dir": ipc_dir,
        "workers": 2,
        "concurrency": 2,
        "task_modules": ("taskyard.examples",),
        "shutdown_timeout": 5.0,
        "announce_interval": 0.5,
        "request_timeout": 3.0,
        "log_level": "INFO",
    }
    base.update(overrides)
    return Settings(**base)
