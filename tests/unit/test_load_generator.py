"""bench/_load/generator.py, a generator process's step, on a client that answers at once
(or fails): what it counts, sends and leaves out, never how fast."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _load import generator
from _load.clients import Done
from _load.plan import Job, Kind


class Answering:
    """A client whose every task ends at once, ok or not, in the sending thread."""

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.sends = 0

    def send(self, done: Done) -> None:
        self.sends += 1
        done(self.ok, "" if self.ok else f"refused #{self.sends}")

    def one(self) -> tuple[bool, str]:
        return self.ok, ""

    def close(self) -> None:
        pass


def _job(kind: Kind, **fields: float) -> Job:
    values = {"start_at": time.monotonic(), "duration": 60.0, "warmup": 0.0, "max_tasks": 1000, "drain": 5.0}
    values.update(fields)
    return Job(
        kind=kind,
        start_at=values["start_at"],
        duration=values["duration"],
        warmup=values["warmup"],
        max_tasks=int(values["max_tasks"]),
        inflight=int(values.get("inflight", 0)),
        rate=values.get("rate", 0.0),
        index=int(values.get("index", 0)),
        of=int(values.get("of", 1)),
        drain=values["drain"],
    )


def test_a_closed_loop_stops_at_its_bound_and_counts_every_task_it_sent() -> None:
    client = Answering()
    # A minute long: only the bound on tasks can end it within the test's timeout.
    outcome = generator._run_sync(client, _job(Kind.CLOSED, inflight=2, max_tasks=10, warmup=30.0))
    assert client.sends == outcome.sent == 10
    # The bound came within the warm-up: the step counts from its start instead.
    assert outcome.counted == len(outcome.latencies_ms) == 10
    assert outcome.errors == outcome.unfinished == 0
    assert outcome.lags_ms == ()  # a closed loop has no schedule to be late for


def test_a_process_given_no_task_in_flight_sends_none_and_returns() -> None:
    client = Answering()
    outcome = generator._run_sync(client, _job(Kind.CLOSED, inflight=0, duration=0.1))
    assert client.sends == outcome.sent == outcome.counted == 0


def test_an_open_loop_sends_its_share_of_the_arrivals_and_counts_those_after_the_warmup() -> None:
    client = Answering()
    # 2,000/s over 0.1 s dealt to 2 processes: this one sends arrivals 1, 3, ..., 199.
    job = _job(Kind.OPEN, rate=2000.0, duration=0.1, warmup=0.05, index=1, of=2)
    outcome = generator._run_sync(client, job)
    assert client.sends == outcome.sent == 100
    assert outcome.counted == len(outcome.lags_ms) == len(outcome.latencies_ms) == 50
    assert outcome.window == 0.1 - 0.05
    assert all(lag >= 0 for lag in outcome.lags_ms)


def test_failed_tasks_are_counted_with_the_first_error_and_no_latency() -> None:
    outcome = generator._run_sync(Answering(ok=False), _job(Kind.OPEN, rate=100.0, duration=0.05))
    assert outcome.sent == outcome.errors == 5
    assert outcome.latencies_ms == () and outcome.unfinished == 0
    assert outcome.first_error == "refused #1"


def test_a_target_is_not_met_by_a_step_that_lost_tasks() -> None:
    """The percentiles count the tasks that finished: the slowest ones, failed or never
    finished, are not in them, so a step that lost some cannot meet a target."""
    from _load import figures

    def step(name: str, *, errors: int = 0, unfinished: int = 0) -> figures.Step:
        return figures.Step(
            system="taskyard", round=1, name=name, rate=1.0, done_per_s=5000.0,
            probe_p50_ms=1.0, probe_p99_ms=2.0, errors=errors, unfinished=unfinished,
        )  # fmt: skip

    whole = [step(figures.MAX), step(figures.IDLE), step("50 %"), step("80 %")]
    assert all(v.met for v in figures.targets(whole))
    lossy = [step(figures.MAX), step(figures.IDLE), step("50 %", unfinished=3), step("80 %", errors=1)]
    verdicts = {v.target: v for v in figures.targets(lossy)}
    assert verdicts["unary maximum >= 2,000 tasks/s"].met
    assert not verdicts["probe p99 at 50 % <= 10 ms"].met
    assert "3 failed or unfinished" in verdicts["probe p99 at 50 % <= 10 ms"].figure
    assert not verdicts["probe p99 at 80 % <= 25 ms"].met
    assert not verdicts["probe p50 at 50 % <= 1.5x idle p50"].met
