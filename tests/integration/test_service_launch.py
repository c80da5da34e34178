"""Starting a service (cli.procs.spawn, as taskyard dev, taskyard serve and the test
cluster do): the launcher runs no at-fork handler, and the service still ends with
its launcher.

A launcher that forked (a ``preexec_fn`` makes subprocess fork instead of vfork) ran
every at-fork handler in the child; gRPC's child handler deadlocks when another
thread of the launcher is inside gRPC, so the child never reached exec and the
launcher waited in Popen for good (CI: a test runner's spawn of the result-store hung
for the whole 120 s of its test)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil
import pytest
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.cli import procs
from taskyard.core import lifecycle

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

# A launcher as a test runner is one: a gRPC client of its own open (grpc.aio's poller
# thread waits inside gRPC from then on), an at-fork handler counting the forks that
# run handlers, then the result-store started through procs.spawn. It prints the
# store's pid and the count, and keeps running until its stdin closes.
LAUNCHER = """
import asyncio, os, subprocess, sys
import grpc
from taskyard.cli import procs

forks = []
os.register_at_fork(before=lambda: forks.append(1))


async def open_channel():
    return grpc.aio.insecure_channel("127.0.0.1:1")


loop = asyncio.new_event_loop()
channel = loop.run_until_complete(open_channel())
with open(sys.argv[1], "ab") as log:
    store = procs.spawn("result-store", os.environ, stdout=log, stderr=subprocess.STDOUT)
print(store.pid, len(forks), flush=True)
sys.stdin.read()
procs.stop_processes([store])
"""


@contextmanager
def _launched(env: dict[str, str], log: Path) -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    """The launcher's process, the store's pid and how many at-fork handlers ran;
    on leaving, whatever happened (a launcher that hangs before its line, an
    assertion, a timeout), the launcher and the store are ended."""
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(log)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    store: psutil.Process | None = None
    try:
        assert launcher.stdout is not None
        line = launcher.stdout.readline()
        assert line, f"the launcher ended before starting the store (exit {launcher.wait()})"
        pid, forks = (int(word) for word in line.split())
        store = psutil.Process(pid)
        yield launcher, pid, forks
    finally:
        if store is not None:
            with suppress(psutil.NoSuchProcess):
                store.kill()
        if launcher.poll() is None:
            launcher.kill()
        launcher.wait(timeout=30)
        for pipe in (launcher.stdin, launcher.stdout):
            if pipe is not None:
                pipe.close()


def _logged(log: Path, needle: str) -> bool:
    return log.exists() and needle in log.read_text("utf-8", "replace")


@pytest.fixture
def store_env(database_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A result-store's environment: the test cluster's (a database of its own, an ipc
    directory, the session's bus keys), nothing started by the cluster itself."""
    cluster = Cluster(database_url, tmp_path)
    try:
        yield dict(cluster.env)
    finally:
        cluster.stop()  # its ipc directory


def test_a_service_starts_without_running_the_launchers_fork_handlers(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "store.log"
    with _launched(store_env, log) as (launcher, _, forks):
        assert forks == 0, "the launcher forked and ran its at-fork handlers (gRPC's among them)"
        wait_until(lambda: _logged(log, "ready"), 30, lambda: f"the store's ready line\n{log.read_text()}")
        launcher.communicate(timeout=30)  # stdin closed: it stops the store and ends
        assert launcher.returncode == 0


def test_a_service_stops_when_its_launcher_is_killed(store_env: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "store.log"
    with _launched(store_env, log) as (launcher, pid, _):
        store = psutil.Process(pid)
        wait_until(lambda: _logged(log, "ready"), 30, lambda: f"the store's ready line\n{log.read_text()}")
        launcher.kill()
        launcher.wait(timeout=10)
        # SIGTERM from the kernel as its launcher died: the store drains and stops.
        store.wait(timeout=30)
        assert _logged(log, "result-store stopped"), log.read_text()


def test_a_service_whose_launcher_died_before_it_started_stops_at_once(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    # A launcher already gone (a process that ran and was reaped): the parent the
    # service finds is not the one named, so it sends itself the SIGTERM it missed.
    gone = subprocess.Popen(["true"])
    gone.wait()
    log_path = tmp_path / "store.log"
    with open(log_path, "ab") as log, lifecycle.stop_signals_held():
        store = subprocess.Popen(
            procs.service_argv("result-store"),
            env={**store_env, lifecycle.LAUNCHER_PID: str(gone.pid)},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert store.wait(timeout=30) == 0, log_path.read_text()
        assert "result-store stopped" in log_path.read_text(), log_path.read_text()
    finally:
        if store.poll() is None:
            store.kill()


def test_a_launcher_pid_that_is_not_a_number_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lifecycle.LAUNCHER_PID, "pool-1")
    with pytest.raises(ValueError, match="TASKYARD_LAUNCHER_PID must be a process id, not 'pool-1'"):
        lifecycle.end_with_launcher()
    assert lifecycle.LAUNCHER_PID not in os.environ


def test_a_failing_test_leaves_neither_the_launcher_nor_the_store(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(RuntimeError), _launched(store_env, tmp_path / "store.log") as (launcher, pid, _):
        store = psutil.Process(pid)
        raise RuntimeError("a test failing before it stops them")
    assert launcher.poll() is not None
    with suppress(psutil.NoSuchProcess):
        store.wait(timeout=30)
    assert not store.is_running() or store.status() == psutil.STATUS_ZOMBIE
