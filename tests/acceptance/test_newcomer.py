"""The README's first hour, as someone new runs it: a fresh clone, ``make dev`` with its
defaults, a task submitted with the CLI, its trace looked at in the Jaeger UI (in
chromium), a second pool started in another shell serving a task name of its own
(examples/README.md, "Serve your own tasks"), and a stop by a double SIGTERM (make
forwards the one its process group got) that leaves no process and no PostgreSQL.

What differs from a newcomer's machine, and why:
- The clone's ``.venv`` is made without a download: a virtualenv whose third-party
  packages are this checkout's venv's and whose ``taskyard`` is the clone's own sources
  (what ``pip install -e .`` gives), with the install stamps make checks, so ``make dev``
  does not install again. Everything else ``make dev`` does (grpcurl, Jaeger and its UI
  from the tools cache, then ``taskyard dev``) it does itself.
- Tests run in parallel, so the NNG bus goes over ipc in a directory of the test's own
  (TASKYARD_TRANSPORT, TASKYARD_IPC_DIR: the defaults are ports 5550-5564) and the
  gateway takes a free port (TASKYARD_GRPC_PORT: the default is 50051, and
  TASKYARD_TARGET tells the CLI), all set in the environment of every shell, as a user
  would export them. The dashboard moves to a
  free port by itself when 8080 is taken, and Jaeger to free ports when its defaults
  are; the metrics ports are dev's defaults.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ports
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
from support.jaeger_ui import spans_shown

from taskyard.cli import procs

# Above the clone (300 s) and make dev's READY_TIMEOUT together, with the rest of the hour.
pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
# The source roots pyproject.toml maps the taskyard packages from.
SOURCE_ROOTS = (
    "services/core",
    "services/gateway",
    "services/scheduler",
    "services/result_store",
    "services/worker_pool",
    "services/cli",
    "clients/python",
)
# make dev installs grpcurl and copies Jaeger and its UI from the tools cache first.
READY_TIMEOUT = 600.0
# The trace's two ends: the gateway's submission (the banner's `task submit --wait` is
# one RunTask call) and the attempt a worker ran (spans of messages are named after
# their queue, OpenTelemetry's messaging convention).
SUBMIT_SPAN = "/taskyard.v1.TaskService/RunTask"
PROCESS_SPAN = "process default"


@pytest.fixture
def clone() -> Iterator[Path]:
    """A fresh clone of this repository's committed tree, with its venv (see above)."""
    with scratch_dir("ty-newcomer-") as scratch:
        root = scratch / "taskyard"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(root)], check=True, timeout=300)
        _venv(root)
        yield root


def _venv(root: Path) -> None:
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Only the dependencies of this venv: its own editable install is a .pth hook of its
    # site-packages, which a path listed here does not run.
    (Path(purelib) / "taskyard-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (Path(purelib) / "taskyard-clone.pth").write_text("".join(f"{root / r}\n" for r in SOURCE_ROOTS))
    script = venv / "bin" / "taskyard"
    script.write_text(f"#!{python}\nimport sys\nfrom taskyard.cli.main import main\nsys.exit(main())\n")
    script.chmod(0o755)
    # The stamps make dev's install rule checks (newer than pyproject.toml: installed).
    makefile = (root / "Makefile").read_text()
    for stamp in re.findall(r"^VENV_STAMP\w* := (\S+)$", makefile, re.MULTILINE):
        (root / stamp).touch()
    where = subprocess.run(
        [str(python), "-c", "import taskyard.cli.dev as d; print(d.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(root), f"the clone's venv imports {where}"


def _banner_value(banner: list[str], label: str) -> str:
    line = next(line for line in banner if line.strip().startswith(label))
    return line.split(label, 1)[1].strip()


def test_the_first_hour(clone: Path) -> None:
    ipc_dir = clone.parent / "ipc"
    port = ports.free_port()
    shell = user_env(
        {
            "TASKYARD_TRANSPORT": "ipc",
            "TASKYARD_IPC_DIR": str(ipc_dir),
            "TASKYARD_GRPC_PORT": str(port),
            "TASKYARD_TARGET": f"localhost:{port}",  # where the CLI looks (default localhost:50051)
            # As an activated venv (README): the clone's taskyard first on PATH.
            "PATH": os.pathsep.join([str(clone / ".venv" / "bin"), user_env()["PATH"]]),
        }
    )
    dev = Terminal(["make", "dev"], cwd=clone, env=shell)
    pool: Terminal | None = None
    pids: dict[str, int] = {}
    seen: set[int] = set()
    try:
        dev.wait_for("Taskyard is ready", timeout=READY_TIMEOUT)
        banner = dev.lines_until("Ctrl-C", timeout=30)
        pids = banner_pids(banner)
        jaeger = re.search(r"Jaeger ready \(pid (\d+)\)", dev.text)
        # (Its ports are Jaeger's defaults, 4317, 4318 and 16686, or free ones when a `make dev`
        # running on this machine meanwhile holds those: the banner names the UI either way.)
        assert jaeger, f"make dev started no Jaeger:\n{dev.text}"
        pids["jaeger"] = int(jaeger.group(1))
        seen = processes_of(pids)
        assert (clone / ".taskyard" / "pgdata").is_dir()  # the default, relative data dir
        target = f"localhost:{port}"
        assert f"Taskyard is ready: gRPC taskyard.v1.TaskService on {target}" in dev.text

        # The banner's CLI line, as printed.
        cli = next(line.strip() for line in banner if line.strip().startswith("taskyard task submit"))
        assert cli == f"taskyard task submit add 2 3 --wait --target {target}", cli
        done = _run([*cli.split(), "-o", "json"], clone, shell)
        task = json.loads(done)["task"]
        assert task["state"] == "TASK_STATE_SUCCESS" and task["result"] == 5, task
        trace_id = task["trace_id"]
        assert re.fullmatch(r"[0-9a-f]{32}", trace_id), task

        # Its trace, in the Jaeger UI the banner names, as a browser shows it.
        ui = _banner_value(banner, "tracing:")
        assert ui.startswith("Jaeger UI at "), ui
        spans_shown(ui.removeprefix("Jaeger UI at "), trace_id, expect={SUBMIT_SPAN, PROCESS_SPAN})

        # examples/README.md, "Serve your own tasks", in another shell of the clone.
        pool = Terminal(
            ["PYTHONPATH=. TASKYARD_TASK_MODULES=examples.my_tasks taskyard serve worker-pool"],
            cwd=clone,
            env=shell,
            shell=True,
        )
        pool.wait_for("taskyard: bus key from ", timeout=60)
        pool.wait_for("worker-pool ready", timeout=120)
        procs.wait_ready(f"127.0.0.1:{port}", deadline=time.monotonic() + 60, probe_name="word_count")
        words = ["taskyard", "task", "submit", "word_count", "a rose is a rose", "--wait", "-o", "json"]
        counted = json.loads(_run(words, clone, shell))["task"]
        assert counted["result"] == {"a": 2, "rose": 2, "is": 1}, counted
        assert "the suite refuses" not in pool.text
        assert pool.stop(grace=60) == 0, pool.text

        # dev's own Jaeger is still the one running (not one that answered its checks for it
        # while another held its ports, and exited).
        assert alive(pids["jaeger"]), f"dev's Jaeger (pid {pids['jaeger']}) has exited:\n{dev.text}"

        # Stop as make is stopped: SIGTERM to its process group, twice (make forwards each
        # one to taskyard dev, which also gets them itself).
        seen |= processes_of(pids)
        os.killpg(dev.pid, signal.SIGTERM)
        os.killpg(dev.pid, signal.SIGTERM)
        dev.proc.wait(timeout=120)
        dev.wait_for("PostgreSQL stopped", timeout=30)  # its output may still be in the pipe
    finally:
        if pool is not None:
            pool.stop(grace=10)
        dev.stop(grace=60)
        leftover = left_behind(seen | set(pids.values()), [dev.pid, *pids.values()])
        kill_all(leftover)
    assert not leftover, f"processes left behind: {leftover}\n{dev.text}"
    assert not alive(pids["postgres"])


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done.stdout
