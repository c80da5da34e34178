"""`bench/compare --quick --systems taskyard`: the comparison runner end to end, Taskyard
alone (so the benchmark extras, pgqueuer and Celery, need not be installed). Checks the
shape of what it prints, never a figure: the figures live in docs/benchmarks.md."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(90)]

COMPARE = Path(__file__).resolve().parents[2] / "bench" / "compare"
NUMBER = r"[\d,]+(?:\.\d+)?"
SUMMARY_ROW = re.compile(
    rf"^\| taskyard \| {NUMBER} \| — \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|$",
    re.MULTILINE,
)
KINDS = ("gateway", "scheduler", "result-store", "pool manager", "worker", "postgres")


def _run(*args: str, timeout: float) -> tuple[int, str]:
    proc = subprocess.Popen(
        [sys.executable, str(COMPARE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")},
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # SIGTERM lets the runner stop what it started, by PID; SIGKILL only if that hangs.
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=20)
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"bench/compare outlived {timeout}s:\n{out}")
    return proc.returncode, out


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_quick_taskyard_run_prints_a_round_and_the_median() -> None:
    code, out = _run("--quick", "--systems", "taskyard", "--tasks", "1000", "--samples", "50", timeout=60)
    assert code == 0, out
    assert out.startswith("# compare\ncommand: "), out
    for heading in ("## round 1", "## median of 1 round(s)"):
        assert heading in out, out
    assert len(re.findall(r"^\| system \| tasks/s \| vs pgqueuer \| p50 ms \| p99 ms \|", out, re.M)) == 2, (
        out
    )
    assert len(SUMMARY_ROW.findall(out)) == 2, out
    for kind in KINDS:
        rows = re.findall(rf"^\| taskyard \| {kind} \| \d+ \| {NUMBER} \| {NUMBER} \|$", out, re.M)
        assert len(rows) == 2, f"{kind!r} rows:\n{out}"
    assert "| pgqueuer |" not in out and "| celery |" not in out, out


def test_unknown_system_is_refused() -> None:
    code, out = _run("--systems", "taskyard,rq", timeout=30)
    assert code == 2 and "--systems: choose from taskyard, pgqueuer, celery" in out, out
