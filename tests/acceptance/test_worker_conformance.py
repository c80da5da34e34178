"""The worker conformance scenarios (clients/conformance/workers.md) against one live
`taskyard dev`: the driver (clients/conformance/workers.py) runs every scenario with the
Python worker over the public protocol, the Go worker and the TypeScript worker, each
printing `<language> worker conformance: N/N passed`.

The Go and TypeScript workers are built by `make clients` (CI runs it first); a missing
build fails here with that instruction rather than skipping.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.conformance import CREATE_LIMIT, LIMIT, READY_TIMEOUT, as_admin, run_program, running_dev
from support.dev_run import scratch_dir
from support.run_summary import CONFORMANCE_PROPERTY, RecordProperty

from taskyard.client import Client, TaskState

# Bounds the driver's whole run (each of its waits is bounded too: 60 s).
RUN_TIMEOUT = 600
pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.timeout(READY_TIMEOUT + RUN_TIMEOUT + 60),
    pytest.mark.xdist_group("worker-conformance"),
]

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = (ROOT / "clients/conformance/workers.md").read_text()
SCENARIOS = re.findall(r"(?m)^\d+\. \*\*`(\w+)`\*\*", CONTRACT)
TOKEN = "worker-conformance-token-0123456789"
READ_TOKEN = "worker-reader-token-0123456789"
ADMIN_TOKEN = "worker-conformance-admin-0123456789"
# The suite's lease and cancel deadline: short, so lease_renewal and cancel_ignored are quick.
LEASE_SECONDS = "4"
CANCEL_DEADLINE = "3"


DRIVER = [sys.executable, "clients/conformance/workers.py"]
# Each language's conformance worker, as workers.md runs it, and what `make clients` builds for it.
WORKERS: dict[str, list[str]] = {
    "python": [sys.executable, "clients/python/conformance_worker.py"],
    "go": ["clients/go/bin/conformance-worker"],
    "typescript": ["node", "clients/typescript/conformance/worker.mjs"],
}
BUILT: dict[str, list[Path]] = {
    "go": [ROOT / "clients/go/bin/conformance-worker"],
    "typescript": [
        ROOT / "clients/typescript/dist/index.js",
        ROOT / "clients/typescript/conformance/worker.mjs",
    ],
}


def test_the_contract_lists_the_scenarios() -> None:
    assert len(SCENARIOS) == 13 and len(set(SCENARIOS)) == 13, SCENARIOS
    assert f"`{DRIVER[1]}`" in CONTRACT


@dataclass(frozen=True, kw_only=True)
class Suite:
    target: str

    def driver_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}
        env.update(
            TASKYARD_TARGET=self.target,
            TASKYARD_TOKEN=TOKEN,
            TASKYARD_READ_TOKEN=READ_TOKEN,
            TASKYARD_LIMIT=LIMIT,
            TASKYARD_LEASE_SECONDS=LEASE_SECONDS,
            TASKYARD_CANCEL_DEADLINE=CANCEL_DEADLINE,
        )
        return env


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    tokens = (
        f"{TOKEN} work,submit,read worker-conformance\n{READ_TOKEN} read reader\n"
        f"{ADMIN_TOKEN} admin worker-conformance-admin\n"
    )
    env = {
        "TASKYARD_TRANSPORT": "ipc",
        "TASKYARD_TOKEN": TOKEN,
        "TASKYARD_LEASE_SECONDS": LEASE_SECONDS,
        "TASKYARD_CANCEL_DEADLINE": CANCEL_DEADLINE,
    }
    # Not under tmp_path: pgserver's own user must reach the data (dev_run.scratch_dir).
    with scratch_dir("ty-worker-conformance-") as work:
        env = {**env, "TASKYARD_IPC_DIR": str(work / "ipc")}
        with running_dev(work, env, tokens) as target:
            as_admin(target, CREATE_LIMIT, token=ADMIN_TOKEN)
            yield Suite(target=target)


def _require_built(language: str) -> None:
    for built in BUILT.get(language, []):
        if not built.exists():
            pytest.fail(
                f"the {language} worker is not built ({built.relative_to(ROOT)} missing): run `make clients`"
            )


@pytest.mark.parametrize("language", list(WORKERS))
def test_worker_conformance(suite: Suite, language: str, record_property: RecordProperty) -> None:
    _require_built(language)
    done = run_program(
        [*DRIVER, "--language", language, "--", *WORKERS[language]], suite.driver_env(), RUN_TIMEOUT
    )
    out = done.stdout.splitlines()
    reported = [m.group(2) for line in out if (m := re.match(r"(PASS|FAIL) (\w+)", line))]
    passed = [line.split()[1] for line in out if line.startswith("PASS ")]
    summary = out[-1] if out else ""
    record_property(CONFORMANCE_PROPERTY, summary)  # in the run's summary (conftest.py)
    transcript = f"{done.stdout}\n{done.stderr[-6000:]}"
    assert reported == SCENARIOS, f"scenarios reported out of order or missing:\n{transcript}"
    assert passed == SCENARIOS and done.returncode == 0, transcript
    assert summary == f"{language} worker conformance: {len(SCENARIOS)}/{len(SCENARIOS)} passed", transcript


def _readme_worker_block() -> str:
    text = (ROOT / "clients/python/README.md").read_text()
    section = text[text.index("\n## A worker\n") :].split("\n## ", 2)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "clients/python/README.md's worker section has no python block"
    return found.group(1)


def test_readme_worker_block_is_in_the_example() -> None:
    """The README's block is the example's own lines, so running the example runs it."""
    assert _readme_worker_block() in (ROOT / "clients/python/examples/worker.py").read_text()


def test_worker_example_runs_greet_and_drains_on_sigterm(suite: Suite) -> None:
    env = suite.driver_env()
    proc = subprocess.Popen(
        [sys.executable, "clients/python/examples/worker.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        first = lines.get(timeout=60)
        assert first is not None and first.startswith("ready "), (first, proc.stderr)
        with Client(suite.target, token=TOKEN, tls=False) as client:
            task = client.wait(client.submit("greet", "world").id, timeout=60)
            assert (task.state, task.result) == (TaskState.SUCCESS, "hello, world"), task.failure
            assert task.worker_id == first.split()[1]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
