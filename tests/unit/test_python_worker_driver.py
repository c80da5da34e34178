"""The worker conformance driver's own parts (clients/conformance/workers.py), without a
suite: how it reads a worker's ready line and exit, and how it counts attempts running at
once for shared_limit."""

from __future__ import annotations

import datetime
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "conformance_workers", ROOT / "clients/conformance/workers.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


workers = _driver()
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def test_spans_that_touch_do_not_overlap_and_nested_ones_do() -> None:
    assert workers.most_at_once([(at(0), at(1)), (at(1), at(2)), (at(2), at(3))]) == 1
    assert workers.most_at_once([(at(0), at(3)), (at(1), at(2)), (at(1.5), at(4))]) == 3
    assert workers.most_at_once([(at(0), at(2)), (at(1), at(3)), (at(2), at(4))]) == 2
    with pytest.raises(workers.Failed, match="start or finish"):
        workers.most_at_once([(at(0), None)])


async def test_the_ready_line_gives_the_worker_id_and_the_exit_its_status() -> None:
    script = "import sys; print('starting'); print('ready worker-7', flush=True); sys.exit(3)"
    process = await workers.WorkerProcess.start("test worker", [sys.executable, "-c", script], {})
    try:
        assert await process.ready() == "worker-7"
        assert await process.exited() == 3
    finally:
        process.kill()


async def test_a_worker_that_exits_before_ready_fails_with_its_stderr() -> None:
    script = "import sys; print('UNAUTHENTICATED: bad token', file=sys.stderr); sys.exit(1)"
    process = await workers.WorkerProcess.start("refused worker", [sys.executable, "-c", script], {})
    try:
        with pytest.raises(workers.Failed, match="exited with 1 before it was ready: UNAUTHENTICATED"):
            await process.ready()
    finally:
        process.kill()


def test_the_driver_needs_its_suite_and_a_worker_command(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TASKYARD_TARGET", "TASKYARD_TOKEN", "TASKYARD_READ_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit, match="TASKYARD_TARGET, TASKYARD_TOKEN, TASKYARD_READ_TOKEN"):
        workers.main(["--language", "python", "--", "worker"])
    with pytest.raises(SystemExit):
        workers.main(["--language", "python"])
    with pytest.raises(SystemExit):
        workers.main(["--language", "python", "--only", "nonesuch", "--", "worker"])
