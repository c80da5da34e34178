"""The Go worker example as clients/go/README.md runs it (`cd examples && go run ./worker`)
against a live `taskyard dev` that traces to a real Jaeger: it prints `ready <worker id>`,
runs the task it registered for a submission from another client, in a span that continues
the task's trace, and a Ctrl-C drains it (`drained`)."""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.dev_run import Terminal, dev_argv, scratch_dir, user_env
from support.observability import parent_of, running_jaeger, service_of, tags, tracing_env, wait_for_spans
from support.ports import free_port

from taskyard.cli import jaeger as jaeger_launcher
from taskyard.client import Client, TaskState

READY_TIMEOUT = 120
# `go run` compiles the example first: minutes on a cold build cache.
BUILD_TIMEOUT = 300
pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(READY_TIMEOUT + BUILD_TIMEOUT + 120)]

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "clients/go/README.md").read_text()
TOKEN = "go-worker-example-token-0123456789"
SERVICE = "taskyard-go-worker-example"


def _readme_command() -> str:
    """The README's command that runs the worker example, as shown."""
    found = re.search(r"`(cd examples && go run \./worker)`", README)
    assert found, "clients/go/README.md shows no `cd examples && go run ./worker`"
    return found.group(1)


@dataclass(frozen=True, kw_only=True)
class Suite:
    target: str
    jaeger: jaeger_launcher.Jaeger


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    with scratch_dir("ty-go-worker-") as work, running_jaeger(work) as jaeger:
        tokens = work / "tokens"
        tokens.write_text(f"{TOKEN} work,submit,read go-worker-example\n")
        port = free_port()
        env = user_env(
            {
                **tracing_env(jaeger),
                "TASKYARD_TRANSPORT": "ipc",
                "TASKYARD_IPC_DIR": str(work / "ipc"),
                "TASKYARD_AUTH_TOKENS_FILE": str(tokens),
                "TASKYARD_TOKEN": TOKEN,  # dev's readiness probe
            }
        )
        dev = Terminal(dev_argv(work / "data", port, concurrency=2), cwd=ROOT, env=env)
        try:
            dev.wait_for("Taskyard is ready", READY_TIMEOUT)
            yield Suite(target=f"127.0.0.1:{port}", jaeger=jaeger)
        finally:
            dev.stop(grace=30)


def test_the_readme_worker_example_runs_a_traced_task_and_drains(suite: Suite) -> None:
    assert shutil.which("go"), "the Go toolchain is not on PATH (clients/go needs Go 1.26)"
    target = suite.target
    env = user_env({"TASKYARD_TARGET": target, "TASKYARD_TOKEN": TOKEN, **tracing_env(suite.jaeger)})
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

    # The attempt's span, exported before the drained worker exited, in the task's trace.
    assert task.trace_id, "the task carries no trace (is the suite tracing?)"

    def attempt_spans(trace: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            s
            for s in trace["spans"]
            if s["operationName"] == "process greet" and service_of(trace, s) == SERVICE
        ]

    def with_parent(trace: dict[str, Any]) -> bool:
        # Each process exports its spans in its own batches: the parent may come later.
        ids = {s["spanID"] for s in trace["spans"]}
        return any(parent_of(s) in ids for s in attempt_spans(trace))

    trace = wait_for_spans(suite.jaeger, task.trace_id, with_parent)
    [span] = attempt_spans(trace)
    assert tags(span).get("span.kind") == "consumer", tags(span)
    assert tags(span).get("taskyard.task_id") == task.id and tags(span).get("taskyard.attempt") == 1, tags(
        span
    )
    by_id = {s["spanID"]: s for s in trace["spans"]}
    parent = by_id.get(parent_of(span) or "")
    assert parent is not None, (
        f"the attempt's span has no parent in the task's trace: {span.get('references')}"
    )
    assert service_of(trace, parent).startswith("taskyard-"), service_of(trace, parent)
