"""The Go worker example as clients/go/README.md runs it (`cd examples && go run ./worker`)
against a live `taskyard dev`: it prints `ready <worker id>`, runs the task it registered
for a submission from another client, and a Ctrl-C drains it (`drained`)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.dev_run import Terminal, scratch_dir, user_env
from support.ports import free_port

from taskyard.client import Client, TaskState

READY_TIMEOUT = 120
# `go run` compiles the example first: minutes on a cold build cache.
BUILD_TIMEOUT = 300
pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(READY_TIMEOUT + BUILD_TIMEOUT + 120)]

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "clients/go/README.md").read_text()
TOKEN = "go-worker-example-token-0123456789"


def _readme_command() -> str:
    """The README's command that runs the worker example, as shown."""
    found = re.search(r"`(cd examples && go run \./worker)`", README)
    assert found, "clients/go/README.md shows no `cd examples && go run ./worker`"
    return found.group(1)


@pytest.fixture(scope="module")
def target() -> Iterator[str]:
    with scratch_dir("ty-go-worker-") as work:
        tokens = work / "tokens"
        tokens.write_text(f"{TOKEN} work,submit,read go-worker-example\n")
        port = free_port()
        env = user_env(
            {
                "TASKYARD_TRANSPORT": "ipc",
                "TASKYARD_IPC_DIR": str(work / "ipc"),
                "TASKYARD_AUTH_TOKENS_FILE": str(tokens),
                "TASKYARD_TOKEN": TOKEN,  # dev's readiness probe
            }
        )
        argv = [sys.executable, "-m", "taskyard.cli", "dev", "--data-dir", str(work / "data")]
        argv += ["--port", str(port), "--no-jaeger", "--metrics-port", "0", "--http-port", "0"]
        argv += ["--workers", "1", "--concurrency", "2", "--grace", "5"]
        dev = Terminal(argv, cwd=ROOT, env=env)
        try:
            dev.wait_for("Taskyard is ready", READY_TIMEOUT)
            yield f"127.0.0.1:{port}"
        finally:
            dev.stop(grace=30)


def test_the_readme_worker_example_runs_a_task_and_drains(target: str) -> None:
    assert shutil.which("go"), "the Go toolchain is not on PATH (clients/go needs Go 1.26)"
    env = user_env({"TASKYARD_TARGET": target, "TASKYARD_TOKEN": TOKEN})
    worker = Terminal([_readme_command()], cwd=ROOT / "clients/go", env=env, shell=True)
    try:
        ready = worker.wait_for(lambda line: line.startswith("ready "), BUILD_TIMEOUT)
        worker_id = ready.split()[1]
        with Client(target, token=TOKEN, tls=False) as client:
            task = client.run("greet", "gopher", wait=60)
            assert task.state is TaskState.SUCCESS, task
            assert task.result == "hello, gopher"
            assert task.worker_id == worker_id
            lines = [x.message for x in client.logs.follow(task.id, timeout=30)]
            assert "greeting gopher" in lines, lines
        # Ctrl-C in its terminal: the whole process group gets SIGINT. `go run` waits for
        # the program and then exits 1 whatever the program's status, so the drain is
        # told by the program's last line.
        os.killpg(worker.pid, signal.SIGINT)
        worker.wait_for(lambda line: line.rstrip() == "drained", 60)
        worker.proc.wait(timeout=30)
    finally:
        worker.stop(grace=10)
