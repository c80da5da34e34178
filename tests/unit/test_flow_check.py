"""bench/flow_check.py, the proof of bench/chaos's flow-control schedule, on made-up
leases and journals: each check passes what the limits allow and fails one attempt,
one admission or one ungated second more."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "flow_check.py"
    spec = importlib.util.spec_from_file_location("flow_check", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["flow_check"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fc = _load()


def run(task: str, start: float, end: float | None, key: str = "k1", attempt: int = 1):
    return fc.Run(task_id=task, attempt=attempt, key=key, started=start, ended=end)


def lease(
    task: str,
    leased: float,
    released: float | None,
    *,
    key: str = "k1",
    queued: float | None = None,
    expires: float = math.inf,
    attempt: int = 1,
):
    return fc.Lease(
        task_id=task,
        attempt=attempt,
        token=f"t1.{task}",
        key=key,
        queued_at=leased if queued is None else queued,
        leased_at=leased,
        released_at=released,
        expires_at=expires,
    )


# --------------------------------------------------------------------------- (a)
def test_three_runs_of_a_key_at_once_pass_and_a_fourth_fails() -> None:
    three = [run(f"t{i}", 0.0 + i * 0.1, 5.0) for i in range(3)]
    ok = fc.check_concurrency([*three, run("other", 0.5, 5.0, key="k2")], [], 3, end=10.0)
    assert ok.passed and ok.most == 3 and ok.keys_at_limit == 1
    over = fc.check_concurrency([*three, run("t3", 4.0, 6.0)], [], 3, end=10.0)
    assert not over.passed and over.most == 4
    key, at, count, ids = over.violations[0]
    assert (key, at, count, ids) == ("k1", 4.0, 4, ("t0", "t1", "t2", "t3"))
    assert any("(a) no key over 3 running: NO" in line for line in over.lines())


def test_a_run_that_ends_when_another_starts_does_not_overlap_it() -> None:
    runs = [run("a", 0.0, 1.0), run("b", 0.0, 2.0), run("c", 0.0, 2.0), run("d", 1.0, 3.0)]
    assert fc.check_concurrency(runs, [], 3, end=10.0).passed


def test_an_orphan_counts_until_its_lease_lapses() -> None:
    # "a" was cut short at 1 s (no end in the journal); its lease lapsed at 4 s.
    runs = [run("a", 1.0, None), run("b", 1.0, 9.0), run("c", 1.0, 9.0)]
    leases = [lease("a", 0.9, None, expires=4.0)]
    during = fc.check_concurrency([*runs, run("d", 3.0, 5.0)], leases, 3, end=10.0)
    assert not during.passed and during.orphans == 1
    after = fc.check_concurrency([*runs, run("d", 4.5, 5.0)], leases, 3, end=10.0)
    assert after.passed


def test_an_orphan_the_store_ended_before_its_lapse_counts_until_then() -> None:
    # The worker died, its manager said so, the store ended the attempt at 2 s.
    runs = [run("a", 1.0, None), run("b", 1.0, 9.0), run("c", 1.0, 9.0), run("d", 3.0, 5.0)]
    figures = fc.check_concurrency(runs, [lease("a", 0.9, 2.0, expires=4.0)], 3, end=10.0)
    assert figures.passed and figures.orphans_ended_by_store == 1


def test_an_orphan_without_a_lease_on_record_counts_until_the_end() -> None:
    runs = [run("a", 1.0, None), run("b", 1.0, 9.9), run("c", 1.0, 9.9), run("d", 9.5, 9.8)]
    figures = fc.check_concurrency(runs, [], 3, end=10.0)
    assert not figures.passed and figures.orphans_without_lease == 1


# --------------------------------------------------------------------------- (b)
def test_a_window_may_hold_the_rate_plus_the_burst_and_not_one_more() -> None:
    # 500/s with a burst of 500: a full bucket at once, then the refill over the second.
    full = [10.0] * 500 + [10.0 + (i + 1) / 500 for i in range(499)]
    ok = fc.check_rate(full, units=500, period=1.0, burst=500, window=1.0, source="leases")
    assert ok.passed and ok.most == 999 and ok.bound == 1000
    over = fc.check_rate([*full, 10.5, 10.6], units=500, period=1.0, burst=500, window=1.0, source="leases")
    assert not over.passed and over.most == 1001 and over.most_from == 10.0


def test_the_window_slides() -> None:
    # 600 at 0.6 s and 600 at 1.4 s: no window aligned on whole seconds holds more
    # than 600, the one from 0.6 s holds all 1,200.
    times = [0.6] * 600 + [1.4] * 600
    figures = fc.check_rate(times, units=500, period=1.0, burst=500, window=1.0, source="leases")
    assert figures.most == 1200 and not figures.passed


# --------------------------------------------------------------------------- history
def test_leases_follow_the_rows_changes() -> None:
    c = fc.Change
    changes = [
        c(task_id="a", attempt=1, state="QUEUED", token="", at=1.0),
        c(task_id="a", attempt=1, state="ASSIGNED", token="t1.x", at=1.5),
        c(task_id="a", attempt=1, state="RUNNING", token="t1.x", at=1.6),
        c(task_id="a", attempt=2, state="RETRYING", token="", at=2.0),
        c(task_id="a", attempt=2, state="QUEUED", token="", at=2.4),
        c(task_id="a", attempt=2, state="ASSIGNED", token="t2.y", at=3.0),
        c(task_id="a", attempt=2, state="SUCCESS", token="", at=3.2),
        # Inserted already leased (the fast path), still running at the end.
        c(task_id="b", attempt=1, state="ASSIGNED", token="t1.z", at=5.0),
        c(task_id="b", attempt=1, state="RUNNING", token="t1.z", at=5.1),
        # Not one of the schedule's tasks.
        c(task_id="probe", attempt=1, state="ASSIGNED", token="t1.p", at=5.0),
    ]
    expiries = {("a", 1, "t1.x"): 3.5, ("b", 1, "t1.z"): 9.0}
    got = fc.leases_from_changes(changes, expiries, {"a": "k1", "b": "k2"})
    assert [(g.task_id, g.attempt, g.queued_at, g.leased_at, g.released_at, g.expires_at) for g in got] == [
        ("a", 1, 1.0, 1.5, 2.0, 3.5),
        ("a", 2, 2.4, 3.0, 3.2, math.inf),
        ("b", 1, 5.0, 5.0, None, 9.0),
    ]


def test_the_journal_of_the_flow_task() -> None:
    lines = [
        "start a 1 100 1.000 customer:1",
        "ok a 1 100 1.500 customer:1",
        "start b 2 101 2.000 customer:2",
        "start c 1 100 1.000",  # another task's line: skipped
    ]
    assert fc.runs_from_journal(lines) == [
        run("a", 1.0, 1.5, key="customer:1"),
        run("b", 2.0, None, key="customer:2", attempt=2),
    ]


# --------------------------------------------------------------------------- (d)
WAIT = {"limit": 3, "units": 500, "period": 1.0, "burst": 500, "takeovers": [], "end": 100.0}


def test_a_wait_with_nothing_holding_it_fails() -> None:
    figures = fc.check_waits([lease("w", 12.0, 13.0, queued=10.0)], outages=[], **WAIT)
    assert not figures.passed and figures.longest_ungated == pytest.approx(2.0)
    assert figures.violations[0][:3] == ("w", 1, "k1")
    assert any("(d) no task QUEUED over 1 s with no gate holding it: NO" in line for line in figures.lines())


def test_a_wait_behind_its_full_key_passes() -> None:
    holders = [lease(f"h{i}", 9.0, 11.9 + i * 0.05) for i in range(3)]
    figures = fc.check_waits([*holders, lease("w", 12.0, 13.0, queued=10.0)], outages=[], **WAIT)
    # Held from 10 s to 11.9 s (three leased), then 0.1 s with nothing holding it.
    assert figures.passed and figures.longest_ungated == pytest.approx(0.1)


def test_a_wait_behind_another_key_does_not_count_as_gated() -> None:
    holders = [lease(f"h{i}", 9.0, 20.0, key="k2") for i in range(3)]
    figures = fc.check_waits([*holders, lease("w", 12.0, 13.0, queued=10.0)], outages=[], **WAIT)
    assert not figures.passed


def test_a_wait_through_an_outage_passes() -> None:
    down = [fc.Outage(label="scheduler", start=10.5, end=11.8)]
    figures = fc.check_waits([lease("w", 12.0, 13.0, queued=10.0)], outages=down, **WAIT)
    assert figures.passed and figures.longest_ungated == pytest.approx(0.5)


def test_a_wait_while_the_rate_bucket_is_empty_passes() -> None:
    # 1,000 admissions at once at 10 s (recorded late): the bucket, 500 under, takes
    # 526 / 500 s to hold 1 + 25 units (the tolerance) again; then 0.85 s to 11.9 s.
    burst = [lease(f"b{i}", 10.0, 10.01, key=f"k{i}") for i in range(1000)]
    figures = fc.check_waits([*burst, lease("w", 11.9, 12.0, queued=10.0)], outages=[], **WAIT)
    assert figures.passed, figures.lines()
    assert figures.rate_gated == pytest.approx(526 / 500)
    assert figures.longest_ungated == pytest.approx(11.9 - 10.0 - 526 / 500)


def test_the_bucket_starts_empty_at_a_takeover() -> None:
    at_takeover = {**WAIT, "takeovers": [10.0]}
    figures = fc.check_waits([lease("w", 10.3, 10.4, queued=9.0)], outages=[], **at_takeover)
    assert figures.passed and figures.longest_ungated == pytest.approx(1.0)
    later = fc.check_waits([lease("w", 12.5, 12.6, queued=9.0)], outages=[], **at_takeover)
    assert not later.passed


def test_a_rate_spent_as_fast_as_it_refills_holds_the_wait() -> None:
    # The replayed bucket starts full and others take units exactly as fast as they refill
    # (500 a second): the replay keeps 500 units to spare (the scheduler had spent units on
    # leases that failed, which the database never recorded), but the last second's
    # admissions reached the rate, so the wait is held from 10.95 s (475 in a second) on.
    others = [lease(f"o{i}", 10.0 + i / 500, 10.0 + i / 500 + 0.001, key=f"o{i % 50}") for i in range(2500)]
    figures = fc.check_waits([*others, lease("w", 14.9, 15.0, queued=10.5)], outages=[], **WAIT)
    assert figures.passed, figures.lines()
    assert figures.longest_ungated == pytest.approx(0.45, abs=0.01)


def test_a_rate_used_at_sixty_percent_does_not_hold_the_wait() -> None:
    others = [lease(f"o{i}", 10.0 + i / 300, 10.0 + i / 300 + 0.001, key=f"o{i % 50}") for i in range(1500)]
    figures = fc.check_waits([*others, lease("w", 14.9, 15.0, queued=10.5)], outages=[], **WAIT)
    assert not figures.passed and figures.longest_ungated == pytest.approx(4.4)
