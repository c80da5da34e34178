"""The worker conformance driver (clients/conformance/workers.md): starts the worker under
test, submits the scenarios' tasks with the Python client, stops or kills worker
processes, and checks what the suite recorded.

    .venv/bin/python clients/conformance/workers.py --language python -- \\
        .venv/bin/python clients/python/conformance_worker.py

Environment: TASKYARD_TARGET, TASKYARD_TOKEN (scopes work,submit,read), TASKYARD_READ_TOKEN
(read only), TASKYARD_LIMIT (a per-key concurrency limit of 2), TASKYARD_LEASE_SECONDS and
TASKYARD_CANCEL_DEADLINE (the suite's). Prints ``PASS <id>`` / ``FAIL <id>: ...`` per
scenario, then ``<language> worker conformance: N/13 passed``; exits 0 only when all
passed. Every wait is bounded, so a broken worker fails its scenario instead of hanging
the run; every process it started is killed by its PID before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import os
import secrets
import signal
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from taskyard.client import AsyncClient, Event, TaskInfo, TaskState

ROOT = Path(__file__).resolve().parents[2]
PARTNER = [sys.executable, str(ROOT / "clients/python/conformance_worker.py")]
# The longest any one wait lasts (a worker's ready line, a task's end, a process's exit).
WAIT = 60.0
# How often a value no event announces is read again.
POLL = 0.2
# The longest a whole scenario lasts.
SCENARIO_LIMIT = 180.0
SCENARIOS = (
    "success",
    "retry_backoff",
    "not_retryable",
    "timeout",
    "cancel_cooperative",
    "cancel_ignored",
    "worker_killed",
    "lease_renewal",
    "logs_progress",
    "child_task",
    "shared_limit",
    "wrong_token",
    "drain_on_sigterm",
)


class Failed(Exception):
    pass


def _decimal(text: str) -> float | None:
    """A decimal string's value (a task.progress event's fraction), None for anything else."""
    try:
        return float(text)
    except ValueError:
        return None


def check(ok: object, what: str) -> None:
    if not ok:
        raise Failed(what)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    language: str
    argv: Sequence[str]
    target: str
    token: str
    read_token: str
    limit: str
    lease_seconds: float
    cancel_deadline: float

    @classmethod
    def from_env(cls, language: str, argv: Sequence[str], env: dict[str, str]) -> Config:
        missing = [k for k in ("TASKYARD_TARGET", "TASKYARD_TOKEN", "TASKYARD_READ_TOKEN") if not env.get(k)]
        if missing:
            raise SystemExit(f"set {', '.join(missing)} (see clients/conformance/workers.md)")
        return cls(
            language=language,
            argv=argv,
            target=env["TASKYARD_TARGET"],
            token=env["TASKYARD_TOKEN"],
            read_token=env["TASKYARD_READ_TOKEN"],
            limit=env.get("TASKYARD_LIMIT", ""),
            lease_seconds=float(env.get("TASKYARD_LEASE_SECONDS", "30")),
            cancel_deadline=float(env.get("TASKYARD_CANCEL_DEADLINE", "3")),
        )


class WorkerProcess:
    """A conformance worker, in a session of its own (so killing its group takes any
    process it started); its stdout read line by line, its stderr kept."""

    def __init__(self, label: str, proc: asyncio.subprocess.Process) -> None:
        self.label = label
        self.proc = proc
        self.pid = proc.pid
        self.worker_id = ""
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._stderr: list[str] = []
        self._readers = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]

    @classmethod
    async def start(cls, label: str, argv: Sequence[str], env: dict[str, str]) -> WorkerProcess:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=ROOT,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return cls(label, proc)

    async def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self._lines.put_nowait(line.decode(errors="replace").rstrip("\n"))
        self._lines.put_nowait(None)

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self._stderr.append(line.decode(errors="replace"))

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def tail(self) -> str:
        return "".join(self._stderr[-20:]).strip()

    async def ready(self) -> str:
        """The worker_id of its ``ready`` line (bounded by WAIT)."""
        until = time.monotonic() + WAIT
        while True:
            try:
                line = await asyncio.wait_for(self._lines.get(), max(0.0, until - time.monotonic()))
            except TimeoutError:
                raise Failed(f"{self.label} printed no ready line in {WAIT:g} s: {self.tail()}") from None
            if line is None:
                code = await self.exited()
                raise Failed(f"{self.label} exited with {code} before it was ready: {self.tail()}")
            if line.startswith("ready "):
                self.worker_id = line.removeprefix("ready ").strip()
                return self.worker_id

    async def exited(self) -> int:
        """Its exit status (bounded by WAIT)."""
        try:
            code = await asyncio.wait_for(self.proc.wait(), WAIT)
        except TimeoutError:
            raise Failed(f"{self.label} did not exit in {WAIT:g} s") from None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._readers), WAIT)
        return code

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def terminate(self) -> None:
        if self.alive:
            os.kill(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


class Driver:
    def __init__(self, config: Config, client: AsyncClient) -> None:
        self.config = config
        self.client = client
        run = secrets.token_hex(3)
        # Names of this run only: a task left by an earlier run is never taken for one of these.
        self.prefix = f"conformance.{config.language}.{run}."
        self.partner_prefix = f"conformance.partner.{run}."
        self.processes: list[WorkerProcess] = []
        self.main: WorkerProcess | None = None

    # --- processes -------------------------------------------------------------

    def env(self, prefix: str, token: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TASKYARD_TARGET=self.config.target,
            TASKYARD_TOKEN=token,
            TASKYARD_TASK_PREFIX=prefix,
            TASKYARD_WORKER_SLOTS="4",
            PYTHONUNBUFFERED="1",
        )
        return env

    async def spawn(self, label: str, argv: Sequence[str], prefix: str, token: str) -> WorkerProcess:
        process = await WorkerProcess.start(label, argv, self.env(prefix, token))
        self.processes.append(process)
        return process

    async def worker(self) -> WorkerProcess:
        """The worker under test, started again if an earlier scenario ended it."""
        if self.main is None or not self.main.alive:
            main = await self.spawn(
                f"{self.config.language} worker", self.config.argv, self.prefix, self.config.token
            )
            await main.ready()
            self.main = main
        return self.main

    def tell_stderr(self, scenario: str) -> None:
        """What the workers said on stderr, after a failed scenario (the driver's stderr)."""
        for process in self.processes:
            if process.stderr:
                print(f"--- {scenario}: {process.label} (pid {process.pid}) stderr:", file=sys.stderr)
                print(process.tail(), file=sys.stderr, flush=True)

    async def kill_all(self) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:  # reaped, and their pipes read to the end
            with contextlib.suppress(Failed):
                await process.exited()

    # --- the suite -------------------------------------------------------------

    async def submit(self, name: str, *args: Any, **options: Any) -> str:
        return (await self.client.submit(self.prefix + name, *args, **options)).id

    async def final(self, task_id: str, wait: float = WAIT) -> TaskInfo:
        task = await self.client.wait(task_id, wait)
        check(task.is_final, f"task {task_id} not final after {wait:g} s: {task.state.name}")
        return task

    async def running(self, task_id: str) -> Event:
        """The task's RUNNING event (WatchEvents, replayed for this task from the oldest
        the store keeps: nothing is missed however late the watch opens)."""
        watch = self.client.events.watch(start="oldest", task_ids=[task_id])

        async def first() -> Event:
            async for event in watch:
                if event.state == "RUNNING":
                    return event
                check(
                    event.state not in ("SUCCESS", "FAILURE", "CANCELLED"), f"task ended {event.state} first"
                )
            raise Failed("the event stream ended")

        try:
            return await asyncio.wait_for(first(), WAIT)
        except TimeoutError:
            raise Failed(f"task {task_id} not RUNNING in {WAIT:g} s") from None
        finally:
            await watch.aclose()

    # --- scenarios -------------------------------------------------------------

    async def success(self) -> None:
        main = await self.worker()
        value = {"a": [1, "x"]}
        task = await self.final(await self.submit("echo", value))
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        check(task.result == value, f"result {task.result!r}")
        check(task.attempt == 1, f"attempt {task.attempt}")
        check(task.worker_id == main.worker_id, f"run by {task.worker_id!r}, not {main.worker_id!r}")

    async def retry_backoff(self) -> None:
        await self.worker()
        task = await self.final(await self.submit("flaky", 3, max_retries=3))
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        check((task.result, task.attempt) == (3, 3), f"result {task.result!r} at attempt {task.attempt}")
        task = await self.client.get(task.id)
        check([f.type for f in task.failures] == ["Flaky", "Flaky"], f"failures {task.failures}")
        for f in task.failures:
            check(f.message == f"attempt {f.attempt}", f"failure message {f.message!r}")
            check(
                f.failed_at and f.retry_at and f.retry_at > f.failed_at,
                f"retry {f.retry_at} after {f.failed_at}",
            )

    async def not_retryable(self) -> None:
        await self.worker()
        task = await self.final(await self.submit("fatal", "no", max_retries=3))
        check(task.state is TaskState.FAILURE, f"state {task.state.name}")
        check(task.attempt == 1, f"attempt {task.attempt}")
        check(
            task.failure and (task.failure.type, task.failure.message) == ("Fatal", "no"), f"{task.failure}"
        )

    async def timeout(self) -> None:
        await self.worker()
        task = await self.final(await self.submit("sleep", 30, timeout=1, max_retries=0))
        check(task.state is TaskState.FAILURE, f"state {task.state.name}")
        check(task.failure and task.failure.type == "TimeoutError", f"failure {task.failure}")

    async def cancel_cooperative(self) -> None:
        await self.worker()
        task_id = await self.submit("sleep", 30)
        await self.running(task_id)
        await self.client.cancel(task_id, "conformance", wait=WAIT / 2)
        task = await self.final(task_id)
        check(task.state is TaskState.CANCELLED, f"state {task.state.name}: {task.failure}")
        check(task.cancel_step == "FLAG", f"cancel step {task.cancel_step!r}")

    async def cancel_ignored(self) -> None:
        await self.worker()
        task_id = await self.submit("stubborn", self.config.cancel_deadline + 3)
        await self.running(task_id)
        await self.client.cancel(task_id, "conformance", wait=WAIT / 2)
        task = await self.final(task_id)
        check(task.state is TaskState.CANCELLED, f"state {task.state.name}: {task.failure}")
        check(task.cancel_step == "KILL", f"cancel step {task.cancel_step!r}")
        # No event says a late outcome was refused: read the task until it counts one.
        for _ in range(int((self.config.cancel_deadline + 3 + WAIT) / POLL)):
            if (task := await self.client.get(task_id)).late_reports >= 1:
                break
            await asyncio.sleep(POLL)
        check(task.state is TaskState.CANCELLED, f"after the late outcome: state {task.state.name}")
        check(task.late_reports == 1, f"late reports {task.late_reports}")

    async def worker_killed(self) -> None:
        first = await self.worker()
        second = await self.spawn(
            f"second {self.config.language} worker", self.config.argv, self.prefix, self.config.token
        )
        await second.ready()
        task_id = await self.submit("sleep", 3, max_retries=2)
        ran = (await self.running(task_id)).worker_id
        victim, survivor = (first, second) if ran == first.worker_id else (second, first)
        check(
            ran == victim.worker_id,
            f"RUNNING on {ran!r}, neither {first.worker_id!r} nor {second.worker_id!r}",
        )
        victim.kill()
        self.main = survivor
        task = await self.final(task_id)
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        check(task.attempt == 2, f"attempt {task.attempt}")
        task = await self.client.get(task_id)
        check(task.failures and task.failures[0].type == "WorkerProcessDied", f"failures {task.failures}")
        check(
            task.worker_id == survivor.worker_id,
            f"last run by {task.worker_id!r}, not {survivor.worker_id!r}",
        )

    async def lease_renewal(self) -> None:
        await self.worker()
        seconds = 2 * self.config.lease_seconds
        task = await self.final(await self.submit("sleep", seconds), wait=WAIT + seconds)
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        check(task.attempt == 1, f"attempt {task.attempt}")

    async def logs_progress(self) -> None:
        await self.worker()
        # From the oldest event the store keeps, of this run's chatty only: opened before the
        # submit, and missing nothing of it however long the stream takes to open.
        watch = self.client.events.watch(start="oldest", task_names=[self.prefix + "chatty"])
        seen: list[Event] = []
        done = asyncio.Event()
        task_id = ""

        async def collect() -> None:
            async for event in watch:
                seen.append(event)
                if event.task_id == task_id and event.state in ("SUCCESS", "FAILURE", "CANCELLED"):
                    done.set()

        collector = asyncio.create_task(collect())
        try:
            task_id = await self.submit("chatty")
            task = await self.final(task_id)
            check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
            check(task.result == "ok", f"result {task.result!r}")
            # Stored as a Python pool's ctx.progress stores it: {"fraction", "message", "at_us"}.
            progress = task.context.get("progress")
            fraction = progress.get("fraction") if isinstance(progress, dict) else progress
            check(fraction == 0.5, f"context {dict(task.context)}")
            lines = [x async for x in self.client.logs.follow(task_id, deadline=WAIT)]
            words = [x.message for x in lines if x.message in ("one", "two", "three")]
            check(words == ["one", "two", "three"], f"log lines {[(x.type, x.message) for x in lines]}")
            check(
                any(x.type == "progress" for x in lines),
                f"no progress line in {[(x.type, x.message) for x in lines]}",
            )
            try:
                await asyncio.wait_for(done.wait(), WAIT)
            except TimeoutError:
                raise Failed(f"WatchEvents did not deliver the task's end in {WAIT:g} s") from None
            events = [e for e in seen if e.task_id == task_id]
            mine = [e.type for e in events]
            # Log lines are not on WatchEvents (its event log keeps state changes and
            # progress, for any worker): the task's assignment and end are, and its progress.
            # Its start may not be: a short attempt's start notice is held back and rides on
            # its outcome (ASSIGNED -> SUCCESS, core/held_starts.py).
            check(
                {"task.assigned", "task.succeeded"} <= set(mine),
                f"WatchEvents delivered {mine}, not the task's assignment and end",
            )
            progressed = [i for i, e in enumerate(events) if e.type == "task.progress"]
            check(progressed, f"WatchEvents delivered {mine}, no task.progress")
            last = events[progressed[-1]]
            # Before the end (the worker's progress is stored before its outcome), while
            # the attempt was live: RUNNING, or ASSIGNED while its start was held back.
            check(progressed[-1] < mine.index("task.succeeded"), f"task.progress after the end: {mine}")
            check(last.state in ("ASSIGNED", "RUNNING"), f"task.progress in state {last.state!r}")
            fraction = last.attributes.get("fraction", "")
            check(
                _decimal(fraction) == 0.5 and last.attributes.get("message") == "half",
                f"task.progress attributes {dict(last.attributes)}",
            )
        finally:
            collector.cancel()
            with contextlib.suppress(BaseException):
                await collector
            await watch.aclose()

    async def child_task(self) -> None:
        await self.worker()
        task = await self.final(await self.submit("parent", "hi"))
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        child = await self.final(str(task.result))
        check(child.parent_id == task.id, f"child's parent {child.parent_id!r}, not {task.id!r}")
        check(child.name == self.prefix + "echo", f"child's name {child.name!r}")
        check(
            child.state is TaskState.SUCCESS and child.result == "hi",
            f"child {child.state.name} {child.result!r}",
        )

    async def shared_limit(self) -> None:
        check(self.config.limit, "TASKYARD_LIMIT is not set (see clients/conformance/workers.md)")
        main = await self.worker()
        partner = await self.spawn("partner python worker", PARTNER, self.partner_prefix, self.config.token)
        try:
            await partner.ready()
            key = secrets.token_hex(6)
            limits = {self.config.limit: key}
            ids: dict[str, WorkerProcess] = {}
            for prefix, who in ((self.prefix, main), (self.partner_prefix, partner)):
                for _ in range(3):
                    ids[(await self.client.submit(prefix + "sleep", 1, limits=limits)).id] = who
            tasks = [await self.final(task_id) for task_id in ids]
            for task in tasks:
                check(task.state is TaskState.SUCCESS, f"{task.name} {task.state.name}: {task.failure}")
                who = ids[task.id]
                check(
                    task.worker_id == who.worker_id, f"{task.name} run by {task.worker_id!r}, not {who.label}"
                )
            most = most_at_once([(t.started_at, t.finished_at) for t in tasks])
            check(most <= 2, f"{most} ran at once under a concurrency limit of 2")
        finally:
            partner.terminate()
            with contextlib.suppress(Failed):
                await partner.exited()
            partner.kill()

    async def wrong_token(self) -> None:
        for token, status in (
            ("wrong-token-0123456789", "UNAUTHENTICATED"),
            (self.config.read_token, "PERMISSION_DENIED"),
        ):
            refused = await self.spawn(f"worker with a {status} token", self.config.argv, self.prefix, token)
            try:
                code = await refused.exited()
            finally:
                refused.kill()
            check(code != 0, f"the worker with a {status} token exited 0")
            check(
                status in refused.stderr,
                f"the refused worker's stderr does not say {status}: {refused.tail()!r}",
            )

    async def drain_on_sigterm(self) -> None:
        main = await self.worker()
        task_id = await self.submit("sleep", 2)
        ran = (await self.running(task_id)).worker_id
        check(ran == main.worker_id, f"RUNNING on {ran!r}, not {main.worker_id!r}")
        main.terminate()
        task = await self.final(task_id)
        check(task.state is TaskState.SUCCESS, f"state {task.state.name}: {task.failure}")
        check(task.attempt == 1, f"attempt {task.attempt}")
        code = await main.exited()
        check(code == 0, f"the drained worker exited {code}: {main.tail()}")


def most_at_once(spans: Sequence[tuple[datetime.datetime | None, datetime.datetime | None]]) -> int:
    """The most spans open at one instant (one that ends as another starts: not both)."""
    edges: list[tuple[datetime.datetime, int]] = []
    for start, end in spans:
        check(start is not None and end is not None, "a task without its start or finish time")
        assert start is not None and end is not None
        edges += [(start, 1), (end, -1)]
    most = now = 0
    for _, step in sorted(edges):
        now += step
        most = max(most, now)
    return most


async def run(config: Config, only: Sequence[str] = ()) -> int:
    scenarios = [s for s in SCENARIOS if not only or s in only]
    passed = 0
    async with AsyncClient(config.target, token=config.token, tls=False) as client:
        driver = Driver(config, client)
        try:
            for scenario in scenarios:
                step: Callable[[], Awaitable[None]] = getattr(driver, scenario)
                try:
                    await asyncio.wait_for(step(), SCENARIO_LIMIT)
                except Failed as err:
                    print(f"FAIL {scenario}: {err}", flush=True)
                except TimeoutError:
                    print(f"FAIL {scenario}: not done in {SCENARIO_LIMIT:g} s", flush=True)
                except Exception as err:
                    print(f"FAIL {scenario}: {type(err).__name__}: {err}", flush=True)
                    traceback.print_exc()
                else:
                    passed += 1
                    print(f"PASS {scenario}", flush=True)
                    continue
                driver.tell_stderr(scenario)
        finally:
            await driver.kill_all()
    print(f"{config.language} worker conformance: {passed}/{len(scenarios)} passed", flush=True)
    return 0 if passed == len(scenarios) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", required=True, help="the worker's language, as printed in the summary")
    parser.add_argument("--only", default="", help="comma-separated scenario ids (default: all, in order)")
    parser.add_argument("worker", nargs=argparse.REMAINDER, help="-- the conformance worker's command")
    args = parser.parse_args(argv)
    command = args.worker[1:] if args.worker[:1] == ["--"] else args.worker
    if not command:
        parser.error("give the worker's command after --")
    only = [x for x in args.only.split(",") if x]
    if unknown := sorted(set(only) - set(SCENARIOS)):
        parser.error(f"no scenario {', '.join(unknown)}; they are {', '.join(SCENARIOS)}")
    return asyncio.run(run(Config.from_env(args.language, command, dict(os.environ)), only))


if __name__ == "__main__":
    sys.exit(main())
