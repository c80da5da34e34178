"""The test clusters' fork server starts a process as ``python -m`` would, and reports
its end as ``subprocess.Popen`` does."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import forkserver
from support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

REPORTER = "support.process_report"


@pytest.fixture
def server() -> Iterator[forkserver.ForkServer]:
    own = forkserver.ForkServer()  # not the process's own: these tests may end it
    try:
        yield own
    finally:
        own.close()


def _report(log: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(log.read_text().splitlines()[0])
    return report


def test_a_forked_process_sees_what_python_dash_m_would_give_it(
    server: forkserver.ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPORT_LEAK_FROM_THE_TEST", "1")
    monkeypatch.chdir(tmp_path)
    extra = tmp_path / "on-the-path"
    env = {"REPORT_MARKER": "mine", "PYTHONPATH": f"{extra}{os.pathsep}{forkserver.TESTS_DIR}"}
    log = tmp_path / "reporter.log"
    log.write_text("")
    child = server.spawn(REPORTER, env, log)
    assert child.wait(timeout=30) == 0
    report = _report(log)
    assert report["pid"] == child.pid and report["sid"] == child.pid  # a session of its own
    assert report["ppid"] == server.pid
    assert report["name"] == "__main__" and str(report["argv0"]).endswith("process_report.py")
    assert report["cwd"] == str(tmp_path)
    assert report["path"] == [str(tmp_path), str(extra)]  # as -m: its directory, then PYTHONPATH
    # Only the environment it was given: nothing of the test's or the server's own.
    assert report["marker"] == "mine" and report["inherited"] == []
    # Stop signals held until its handler waits, as cli.procs.spawn starts a service.
    assert {int(signal.SIGTERM), int(signal.SIGINT)} <= set(report["held"])
    assert report["stdin"] == ""


def test_exit_statuses_are_popens(server: forkserver.ForkServer, tmp_path: Path) -> None:
    log = tmp_path / "reporter.log"
    env = {"PYTHONPATH": str(forkserver.TESTS_DIR)}
    assert server.spawn(REPORTER, {**env, "REPORT_EXIT": "3"}, log).wait(timeout=30) == 3
    waiting = server.spawn(REPORTER, {**env, "REPORT_EXIT": "wait"}, log)
    with pytest.raises(subprocess.TimeoutExpired):
        waiting.wait(timeout=0)
    assert waiting.poll() is None
    waiting.kill()
    assert waiting.wait(timeout=30) == -signal.SIGKILL
    assert waiting.poll() == -signal.SIGKILL


def test_the_exit_joins_threads_runs_atexit_and_flushes(
    server: forkserver.ForkServer, tmp_path: Path
) -> None:
    log = tmp_path / "reporter.log"
    env = {"PYTHONPATH": str(forkserver.TESTS_DIR), "REPORT_EXIT": "4", "REPORT_ENDINGS": "1"}
    assert server.spawn(REPORTER, env, log).wait(timeout=30) == 4
    lines = log.read_text().splitlines()[1:]
    assert lines == ["the thread was joined", "atexit ran"]


def test_a_module_that_fails_to_import_exits_1_with_its_traceback_in_the_log(
    server: forkserver.ForkServer, tmp_path: Path
) -> None:
    log = tmp_path / "missing.log"
    child = server.spawn("support.no_such_module", {"PYTHONPATH": str(forkserver.TESTS_DIR)}, log)
    assert child.wait(timeout=30) == 1
    assert "No module named support.no_such_module" in log.read_text()


def test_a_server_that_died_is_an_error_not_a_wait_for_ever(
    server: forkserver.ForkServer, tmp_path: Path
) -> None:
    log = tmp_path / "reporter.log"
    waiting = server.spawn(REPORTER, {"PYTHONPATH": str(forkserver.TESTS_DIR), "REPORT_EXIT": "wait"}, log)
    wait_until(lambda: _report_of(log), 30, "the reporter's line")
    os.kill(server.pid, signal.SIGKILL)
    with pytest.raises(forkserver.ForkServerError, match="gone"):
        waiting.wait(timeout=30)
    # Its children end with it (SIGTERM as their launcher died): none is left behind.
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(waiting.pid).wait(timeout=30)


def _report_of(log: Path) -> bool:
    return log.exists() and bool(log.read_text().strip())
