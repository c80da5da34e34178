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
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from support import grpcurl

from taskyard.cli.procs import free_port, session_members

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _reader(stream: object, lines: queue.Queue[str | None], log: list[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        log.append(line)
        lines.put(line)
    lines.put(None)


def test_dev_starts_serves_grpcurl_and_stops_cleanly(tmp_path: Path) -> None:
    grpcurl_bin = grpcurl.require()
    port = free_port()
    ipc_dir = tempfile.mkdtemp(prefix="ty-dev-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "QUEUE_", "QUEUED_TASK_"))}
    env.update(
        TASKYARD_TRANSPORT="ipc",
        TASKYARD_IPC_DIR=ipc_dir,
        TASKYARD_HTTP_PORT=str(free_port()),
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
    metrics_base = _free_port_run(4)
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
        deadline = time.monotonic() + 75
        in_banner = False
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail(f"taskyard dev exited ({proc.poll()}) before the banner:\n{''.join(log)}")
            if "Taskyard is ready" in line:
                in_banner = True
            if in_banner:
                banner.append(line.rstrip("\n"))
                if line.startswith("Ctrl-C"):
                    break
        else:
            pytest.fail(f"no ready banner within 75 s:\n{''.join(log)}")

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

        assert any(line.strip().startswith("metrics:") for line in banner), banner
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_base}/metrics", timeout=5) as reply:
            assert b"grpc_server_started_total" in reply.read()  # the gateway's, first of the four

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
        deadline = time.monotonic() + 10
        alive = [p for p in seen if psutil.pid_exists(p)]
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [p for p in seen if _alive(p)]
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
    # Dev runs its internal bus sealed, with a key of its own (never printed).
    assert text.count("internal bus sealed (signing key dev,") >= 4, text


def _free_port_run(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports."""
    for _ in range(100):
        first = free_port()
        if first + count > 65535:
            continue
        probes = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                probes.append(s)
                s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for s in probes:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
