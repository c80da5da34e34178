"""`taskyard dev` smoke test: embedded PostgreSQL, the four services, the printed
grpcurl commands really work, and Ctrl-C leaves no process behind. ~15-30 s."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from support import grpcurl, ports
from support.dev_run import (
    Terminal,
    alive,
    banner_pids,
    kill_all,
    left_behind,
    processes_of,
    scratch_dir,
    user_env,
)
from support.waiting import wait_until

from taskyard.cli import procs
from taskyard.cli.procs import session_members
from taskyard.core import seal

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


GIVEN_KEY = seal.generate_keys("given")


def _reader(stream: object, lines: queue.Queue[str | None], log: list[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        log.append(line)
        lines.put(line)
    lines.put(None)


def test_dev_starts_serves_grpcurl_and_stops_cleanly(scratch: Path) -> None:
    tmp_path = scratch
    grpcurl_bin = grpcurl.require()
    port = ports.free_port()
    ipc_dir = tempfile.mkdtemp(prefix="ty-dev-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "QUEUE_", "QUEUED_TASK_"))}
    env.update(
        TASKYARD_TRANSPORT="ipc",
        TASKYARD_IPC_DIR=ipc_dir,
        TASKYARD_HTTP_PORT=str(ports.free_port()),
        # A key of the user's: dev runs with it, and keeps none of its own.
        TASKYARD_BUS_KEYS=GIVEN_KEY,
        PYTHONUNBUFFERED="1",
    )
    argv = [
        sys.executable,
        "-m",
        "taskyard.cli",
        "dev",
        "--data-dir",
        str(tmp_path / "data"),
        "--port",
        str(port),
    ]
    metrics_base = ports.free_port_block(4)
    # No Jaeger here: its fixed ports are the developer's (tests/acceptance/test_task_traces.py runs one).
    argv += [
        "--workers",
        "1",
        "--concurrency",
        "2",
        "--grace",
        "8",
        "--no-jaeger",
        "--metrics-port",
        str(metrics_base),
    ]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL
    )
    lines: queue.Queue[str | None] = queue.Queue()
    log: list[str] = []
    threading.Thread(target=_reader, args=(proc.stdout, lines, log), daemon=True).start()
    seen: set[int] = set()
    pids: dict[str, int] = {}
    try:
        banner: list[str] = []
        in_banner = False
        while True:
            # Each line is the signal: a start-up silent this long has hung.
            try:
                line = lines.get(timeout=75)
            except queue.Empty:
                pytest.fail(f"taskyard dev silent for 75 s before its ready banner:\n{''.join(log)}")
            if line is None:
                pytest.fail(f"taskyard dev exited ({proc.poll()}) before the banner:\n{''.join(log)}")
            if "Taskyard is ready" in line:
                in_banner = True
            if in_banner:
                banner.append(line.rstrip("\n"))
                if line.startswith("Ctrl-C"):
                    break

        # Every process of the suite, for the final check.
        procs_line = next(line for line in banner if line.strip().startswith("processes:"))
        pids = {
            name.strip(): int(pid)
            for name, pid in (p.split("=") for p in procs_line.split(":", 1)[1].split(","))
        }
        assert {"result-store", "scheduler", "worker-pool", "gateway", "postgres"} <= set(pids)
        seen.update(pids.values())
        for pid in list(pids.values()):
            with contextlib.suppress(psutil.Error):
                seen.update(c.pid for c in psutil.Process(pid).children(recursive=True))

        assert any(line.strip().startswith("ops ports:") for line in banner), banner
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_base}/metrics", timeout=5) as reply:
            assert b"grpc_server_started_total" in reply.read()  # the gateway's, first of the four
        # Each service's one ops port answers its probes too (the scheduler's, second).
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_base + 1}/readyz", timeout=5) as reply:
            assert reply.read() == b"ok\n"

        commands = [line.strip() for line in banner if line.strip().startswith("grpcurl ")]
        assert len(commands) == 3, banner
        listing, submit, wait = (shlex.split(c) for c in commands)

        out = subprocess.run(
            [grpcurl_bin, *listing[1:]], capture_output=True, text=True, timeout=30, check=True
        )
        assert "taskyard.v1.TaskService" in out.stdout

        out = subprocess.run(
            [grpcurl_bin, *submit[1:]], capture_output=True, text=True, timeout=30, check=True
        )
        task = json.loads(out.stdout)["task"]
        assert task["name"] == "add"

        wait_argv = [a.replace("TASK_ID", task["id"]) for a in wait[1:]]
        out = subprocess.run(
            [grpcurl_bin, *wait_argv], capture_output=True, text=True, timeout=60, check=True
        )
        done = json.loads(out.stdout)["task"]
        assert done["state"] == "TASK_STATE_SUCCESS", done
        assert done["result"] == 5

        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=45) == 0, "".join(log)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # Nothing may survive: not a service, not a worker, not PostgreSQL.
        with contextlib.suppress(AssertionError):  # what is left is named below, then killed
            wait_until(
                lambda: not any(_alive(p) for p in seen), 10, "the suite's processes to exit", interval=0.1
            )
        # Services run in their own sessions (sid = pid): catches orphans too.
        seen.update(session_members(pids.values()))
        leftover = [p for p in seen if _alive(p)]
        for pid in leftover:  # do not leak into other tests
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(ipc_dir, ignore_errors=True)
    assert not leftover, f"processes left behind: {leftover}\n{''.join(log)}"
    text = "".join(log)
    assert "stopping PostgreSQL" in text
    # Dev runs its internal bus sealed with the key it was given (never printed).
    assert text.count("internal bus sealed (signing key given,") >= 4, text
    assert "bus key from TASKYARD_BUS_KEYS" in text
    assert GIVEN_KEY.split(":")[1] not in text
    assert not (tmp_path / "data" / "bus.keys").exists()
    assert "taskyard serve worker-pool --tasks MODULE   # with this suite's TASKYARD_BUS_KEYS" in text


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# --- a second pool, a refused key, a stop by many signals -----------------------------

# A task module the second pool loads from the project directory (PYTHONPATH=.), with a
# name the suite's own pool does not serve.
SECOND_POOL_TASKS = """
from taskyard.worker_pool import task


@task
def reverse_words(text: str) -> str:
    return " ".join(reversed(text.split()))
"""
REFUSED = "the suite refuses this pool's messages: "


def _dev_in(project: Path, *extra: str) -> Terminal:
    """``taskyard dev`` with its defaults (data in ./.taskyard), run from ``project``.
    The NNG bus goes over ipc in a directory of its own and the gRPC, dashboard and
    metrics ports are free ones or off: the defaults (5550-5564, 50051, 8080, 9464) may
    be another run's. Jaeger's fixed ports too (--no-jaeger)."""
    ipc_dir = tempfile.mkdtemp(prefix="ty-dev-", dir="/tmp")
    env = user_env(dict(TASKYARD_TRANSPORT="ipc", TASKYARD_IPC_DIR=ipc_dir))
    argv = [sys.executable, "-m", "taskyard.cli", "dev", "--port", str(ports.free_port())]
    argv += [
        "--http-port",
        str(ports.free_port()),
        "--metrics-port",
        "0",
        "--no-jaeger",
        "--workers",
        "1",
        *extra,
    ]
    return Terminal(argv, cwd=project, env=env)


@pytest.fixture
def scratch() -> Iterator[Path]:
    with scratch_dir("ty-dev-test-") as path:
        yield path


def test_a_second_pool_joins_from_the_project_directory_and_a_wrong_key_is_named(scratch: Path) -> None:
    tmp_path = scratch
    project = tmp_path / "project"
    project.mkdir()
    (project / "my_pool_tasks.py").write_text(SECOND_POOL_TASKS)
    dev = _dev_in(project, "--grace", "8")
    terminals: list[Terminal] = []
    pids: dict[str, int] = {}
    seen: set[int] = set()
    try:
        dev.wait_for("Taskyard is ready", timeout=90)
        banner = dev.lines_until("Ctrl-C", timeout=10)
        pids = banner_pids(banner)
        seen = processes_of(pids)
        target = f"127.0.0.1:{dev.argv[dev.argv.index('--port') + 1]}"
        key_file = project / ".taskyard" / "bus.keys"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert f"bus keys (one per role) written to {key_file.resolve()} (0600)" in dev.text
        assert key_file.read_text().split("\n")[1].split(":")[1] not in dev.text  # the key itself: never

        # The command dev prints, run as printed from the project directory in another
        # shell (which has its own copy of the ipc variables in it: the command names them).
        at = banner.index("Another worker pool, for your own tasks (in another shell, from this directory):")
        command = banner[at + 1].strip().replace("MODULE", "my_pool_tasks")
        assert command.startswith("PYTHONPATH=. ") and " taskyard serve worker-pool --tasks " in command
        second = Terminal([command], cwd=project, env=user_env(), shell=True)
        terminals.append(second)
        second.wait_for(f"taskyard: bus key from {key_file.resolve()} (taskyard dev's", timeout=30)
        second.wait_for("worker-pool ready", timeout=60)
        procs.wait_ready(target, deadline=time.monotonic() + 60, probe_name="reverse_words")
        cli = ["taskyard", "task", "submit", "reverse_words", "a rose is", "--wait", "-o", "json"]
        submitted = subprocess.run(
            [*cli, "--target", target],
            cwd=project,
            env=user_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        task = json.loads(submitted.stdout)["task"]
        assert task["state"] == "TASK_STATE_SUCCESS" and task["result"] == "is rose a", task
        assert REFUSED not in second.text

        # A pool with another key, and one without any (started elsewhere): each says
        # in one line why the suite does not answer it.
        ipc = {k: v for k, v in (part.split("=", 1) for part in command.split() if "=" in part)}
        ipc.pop("PYTHONPATH")
        wrong = Terminal(
            ["taskyard", "serve", "worker-pool", "--tasks", "taskyard.examples"],
            cwd=project,
            env=user_env({**ipc, "TASKYARD_BUS_KEYS": seal.generate_keys("mine")}),
        )
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        keyless = Terminal(
            ["taskyard", "queue", "start", "--tasks", "taskyard.examples"], cwd=elsewhere, env=user_env(ipc)
        )
        terminals += [wrong, keyless]
        wrong.wait_for("taskyard: bus key from TASKYARD_BUS_KEYS", timeout=30)
        line = wrong.wait_for(REFUSED, timeout=60)
        assert "the suite signs with key id 'dev-worker-pool', this pool holds 'mine'" in line, line
        keyless.wait_for("taskyard: no bus key", timeout=30)
        line = keyless.wait_for(REFUSED, timeout=60)
        assert "(key id 'dev-worker-pool') and this pool has no bus key" in line, line
        for terminal in terminals:
            assert terminal.stop(grace=45) == 0, terminal.text
            assert terminal.read_to_end(timeout=30).count(REFUSED) <= 1, terminal.text  # one line, once

        # Five SIGTERMs at once (make forwards the one the whole group got, and more
        # come): the suite stops, PostgreSQL with it.
        seen |= processes_of(pids)
        dev.signal(signal.SIGTERM, times=5)
        assert dev.proc.wait(timeout=90) == 0, dev.text
        dev.wait_for("PostgreSQL stopped", timeout=30)  # its output may still be in the pipe
    finally:
        for terminal in [*terminals, dev]:
            terminal.stop(grace=5)
        leftover = left_behind(seen, [*pids.values(), *(t.pid for t in terminals)])
        kill_all(leftover)
    assert not leftover, f"processes left behind: {leftover}\n{dev.text}"
    assert not alive(pids["postgres"])


# A process holding the embedded PostgreSQL as dev does, until it is killed.
HOLDER = """
import sys, time
from pathlib import Path
from taskyard.cli.procs import EmbeddedPostgres
pg = EmbeddedPostgres(Path(sys.argv[1]))
print("postgres pid", pg.pid, flush=True)
time.sleep(3600)
"""


def test_a_killed_holder_no_longer_keeps_the_embedded_postgresql_running(scratch: Path) -> None:
    tmp_path = scratch
    # A dev supervisor SIGKILLed (it hung on a stop signal) leaves its pid in pgserver's
    # list of holders, and PostgreSQL running: the last holder stops it, and with a dead
    # one in the list no later run was ever the last.
    pgdata = tmp_path / "pgdata"
    holder = Terminal([sys.executable, "-c", HOLDER, str(pgdata)], cwd=tmp_path, env=user_env())
    postmaster = 0
    try:
        postmaster = int(holder.wait_for("postgres pid", timeout=120).split()[-1])
        holder.signal(signal.SIGKILL)
        holder.proc.wait(timeout=30)
        assert holder.pid in json.loads((pgdata / procs.HANDLE_PIDS_FILE).read_text())
        assert alive(postmaster)

        pg = procs.EmbeddedPostgres(pgdata)
        assert pg.stale_handles == [holder.pid]
        assert pg.pid == postmaster  # the same server, found running
        assert pg.stop() == []
        assert left_behind({postmaster}, []) == []
        assert json.loads((pgdata / procs.HANDLE_PIDS_FILE).read_text()) == []
    finally:
        holder.stop(grace=5)
        if postmaster and alive(postmaster):
            kill_all([postmaster])
