"""`bench/load --quick` with tiny counts: the latency-under-load runner end to end (a
suite, the generator processes, the probe). Checks the shape of what it prints and that
every task it sent ended SUCCESS, never a figure: the figures live in docs/benchmarks.md."""

from __future__ import annotations

import importlib.util
import re
import shutil

import pytest
from support import bench

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(240)]

NUMBER = r"[\d,]+(?:\.\d+)?"
FIGURE = rf"(?:{NUMBER}|—)"
TINY = ("--quick", "--processes", "2", "--channels", "1", "--inflight", "4", "--max-tasks", "200")
STEPS = ("max", "idle probe", "50 %", "80 %")
TABLE_HEAD = re.compile(r"^\| system \| step \| asked /s \| sent /s \| done /s \| p50 ms \| p99 ms \|", re.M)
TARGETS = (
    "unary maximum >= 2,000 tasks/s",
    "probe p50 at 50 % <= 1.5x idle p50",
    "probe p99 at 50 % <= 10 ms",
    "probe p99 at 80 % <= 25 ms",
)
CELERY = importlib.util.find_spec("celery") is not None and shutil.which("redis-server") is not None


def _run(*args: str, timeout: float) -> tuple[int, str]:
    return bench.run("load", *args, timeout=timeout)


def _rows(out: str, system: str) -> dict[str, list[list[str]]]:
    """Each step's rows of ``system`` (a round's table and the medians'), split in cells."""
    rows: dict[str, list[list[str]]] = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith(f"| {system} |") and len(cells) == 15:
            rows.setdefault(cells[1], []).append(cells)
    return rows


def _check_system(out: str, system: str) -> None:
    rows = _rows(out, system)
    assert sorted(rows) == sorted(STEPS), out
    for name, found in rows.items():
        assert len(found) == 2, f"{system} {name}: a round's row and the median's:\n{out}"
        for cells in found:
            assert all(re.fullmatch(FIGURE, c) for c in cells[3:11]), cells
            # Every task sent (and every probe) ended SUCCESS, none left out.
            assert cells[13:] == ["0", "0"], cells
    for cells in rows["max"]:
        assert cells[2] == "4 in flight" and re.fullmatch(NUMBER, cells[4]), cells
    for name in ("50 %", "80 %"):
        for cells in rows[name]:
            assert re.fullmatch(NUMBER, cells[3]) and re.fullmatch(NUMBER, cells[9]), cells
            assert re.fullmatch(rf"{NUMBER} / {NUMBER}(?: BEHIND)?", cells[12]), cells
    for cells in rows["idle probe"]:
        assert re.fullmatch(NUMBER, cells[7]) and int(cells[10]) > 0, cells


def _check_report(out: str) -> None:
    assert out.startswith("# load\ncommand: "), out
    assert "generator: 2 processes x 1 gRPC channels" in out, out
    for heading in ("## round 1", "## median of 1 round(s)", "## targets (taskyard, median of 1 round(s))"):
        assert heading in out, out
    assert len(TABLE_HEAD.findall(out)) == 2, out
    for target in TARGETS:
        assert re.search(rf"^\| {re.escape(target)} \| [^|]+ \| (?:met|not met) \|$", out, re.M), out


def test_quick_run_prints_each_step_the_medians_and_the_targets() -> None:
    code, out = _run(*TINY, timeout=200)
    assert code == 0, out
    _check_report(out)
    _check_system(out, "taskyard")
    assert "| celery |" not in out, out


def test_quick_run_with_runtask_on_the_asyncio_client() -> None:
    code, out = _run(*TINY, "--mode", "runtask", "--client", "aio", timeout=200)
    assert code == 0, out
    assert "taskyard: TaskService/RunTask of noop" in out and "client aio;" in out, out
    _check_report(out)
    _check_system(out, "taskyard")


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_quick_run_on_the_compiled_generator() -> None:
    code, out = _run(*TINY, "--client", "go", timeout=230)
    assert code == 0, out
    assert "client go;" in out, out
    _check_report(out)
    _check_system(out, "taskyard")


@pytest.mark.skipif(not CELERY, reason="needs the benchmark extras (celery[redis], redis-server)")
def test_quick_run_against_celery_alternates_the_systems() -> None:
    code, out = _run(*TINY, "--against", "celery", timeout=230)
    assert code == 0, out
    _check_report(out)
    _check_system(out, "taskyard")
    _check_system(out, "celery")
    round_table = out.split("## round 1", 1)[1].split("## median", 1)[0]
    assert round_table.index("| taskyard | max |") < round_table.index("| celery | max |"), out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--against", "rq"), "--against: the only peer is celery"),
        (("--duration", "3", "--warmup", "3"), "--warmup must be at least 0 and less than --duration"),
        (("--processes", "0"), "--processes must be at least 1"),
        (("--max-tasks", "0"), "--max-tasks must be at least 1"),
        (("--client", "sync,threads"), "--client: one or more of sync, aio, go"),
    ],
)
def test_bad_arguments_are_refused(args: tuple[str, ...], message: str) -> None:
    code, out = _run(*args, timeout=60)
    assert code == 2 and message in out, out
