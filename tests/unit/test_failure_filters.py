"""FailureService's request rules (core/failure_filters.py), as the gateway applies them
before anything reaches the store, and the filters the CLI and the Python client build."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from taskyard.cli.failure_options import failure_filter
from taskyard.client import DeadLetterReason, FailureFilter
from taskyard.core import errors
from taskyard.core import failure_filters as rules
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

TASK = "0b0c8f3e-5d7a-4f0e-9a51-2f4d0c9a7b11"


def violations(call: object) -> list[tuple[str, str]]:
    assert callable(call)
    with pytest.raises(errors.TaskyardError) as info:
        call()
    assert info.value.code is errors.Code.INVALID_ARGUMENT
    return [(v.field, v.description) for v in info.value.violations]


def test_an_empty_filter_is_refused_unless_all() -> None:
    found = violations(lambda: rules.check_filter(fs.FailureFilter()))
    assert [f for f, _ in found] == ["filter"]
    assert "all=true" in found[0][1]
    assert rules.check_filter(fs.FailureFilter(all=True)).all
    # ListFailureGroups: an empty filter is every group.
    assert rules.check_filter(fs.FailureFilter(), groups=True) == fs.FailureFilter()


def test_each_field_is_checked_and_named() -> None:
    bad = fs.FailureFilter(
        group_id="not a group!",
        queue="no spaces",
        task_ids=[TASK, "nope"],
        reason=99,  # type: ignore[arg-type]
        labels={"": "x"},
    )
    bad.failed_after.FromDatetime(dt.datetime(2026, 1, 2, tzinfo=dt.UTC))
    bad.failed_before.FromDatetime(dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    fields = {f for f, _ in violations(lambda: rules.check_filter(bad))}
    assert fields == {
        "filter.group_id",
        "filter.queue",
        "filter.task_ids[1]",
        "filter.reason",
        "filter.labels['']",
        "filter.failed_before",
    }


def test_task_ids_are_bounded_and_made_canonical() -> None:
    too_many = fs.FailureFilter(task_ids=[TASK] * (rules.MAX_TASK_IDS + 1))
    assert [f for f, _ in violations(lambda: rules.check_filter(too_many))] == ["filter.task_ids"]
    checked = rules.check_filter(fs.FailureFilter(task_ids=[TASK.upper()]))
    assert list(checked.task_ids) == [TASK]


def test_a_time_at_the_epoch_is_set_and_one_out_of_range_is_refused() -> None:
    epoch = fs.FailureFilter(failed_before=Timestamp(seconds=0))
    assert rules.check_filter(epoch).HasField("failed_before")  # a condition: not an empty filter
    for far in (Timestamp(seconds=10**15), Timestamp(seconds=-(10**15)), Timestamp(seconds=0, nanos=-1)):
        found = violations(lambda far=far: rules.check_filter(fs.FailureFilter(failed_after=far)))
        assert [f for f, _ in found] == ["filter.failed_after"]
    edge = fs.FailureFilter(failed_after=Timestamp(seconds=rules.MIN_TIMESTAMP_SECONDS))
    edge.failed_before.FromDatetime(dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC))
    assert rules.check_filter(edge) == edge


@pytest.mark.parametrize("rate", [0.0, -1.0, 1e-9, 0.0099, math.nan, math.inf, 10_000.5])
def test_a_rate_must_be_at_least_a_hundredth_and_at_most_10000(rate: float) -> None:
    out: list[rules.Violation] = []
    rules.check_rate(out, rate)
    assert [v.field for v in out] == ["rate"]


def test_rates_notes_pages_and_ids_in_bounds_pass() -> None:
    out: list[rules.Violation] = []
    rules.check_rate(out, rules.MIN_RATE)
    rules.check_rate(out, 10_000.0)
    rules.check_note(out, "x" * 1024)
    rules.check_page(out, 0, "")
    rules.check_page(out, 1000, "abc_-=")
    assert out == []
    rules.check_note(out, "é" * 513)  # 1026 bytes
    rules.check_page(out, 1001, "")
    rules.check_page(out, -1, "a b")
    assert [v.field for v in out] == ["note", "page_size", "page_size", "page_token"]
    assert rules.redrive_id("0a1b-2c") == "0a1b-2c"
    assert [f for f, _ in violations(lambda: rules.redrive_id(""))] == ["id"]
    assert [f for f, _ in violations(lambda: rules.redrive_id("../x"))] == ["id"]


def test_the_cli_options_make_the_filter() -> None:
    now = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
    values = {
        "group": "g1",
        "queue": "emails",
        "name": "send",
        "reason": "not-retryable",
        "since": dt.timedelta(hours=2),
        "until": dt.timedelta(hours=1),
        "labels": {"tenant": "a"},
        "task_ids": (TASK,),
        "every": False,
        "rate": 5.0,
    }
    f = failure_filter(values, now=now)
    assert values == {"rate": 5.0}  # the filter's options taken, the others left
    assert (f.group_id, f.queue, f.name, dict(f.labels), list(f.task_ids)) == (
        "g1",
        "emails",
        "send",
        {"tenant": "a"},
        [TASK],
    )
    assert f.reason == task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE
    assert f.failed_after.ToDatetime(tzinfo=dt.UTC) == now - dt.timedelta(hours=2)
    assert f.failed_before.ToDatetime(tzinfo=dt.UTC) == now - dt.timedelta(hours=1)
    assert failure_filter({"every": True}) == fs.FailureFilter(all=True)


def test_the_python_clients_filter_round_trips() -> None:
    after = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    f = FailureFilter(
        group_id="g1",
        labels={"a": "b"},
        task_ids=(TASK,),
        reason=DeadLetterReason.QUARANTINED,
        failed_after=after,
    )
    assert FailureFilter.from_proto(f.to_proto()) == f
    assert f.to_proto().reason == task_pb2.DEAD_LETTER_REASON_QUARANTINED


def test_a_task_says_its_dead_letter_reason_and_its_redrive() -> None:
    from taskyard.client import TaskInfo

    task = task_pb2.Task(
        id=TASK,
        name="charge",
        dead_letter_reason=task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE,
        redrive_id="r1",
        redriven_from_attempt=1,
        failures=[task_pb2.TaskFailure(attempt=1, type="ValueError", group_id="g1", redrive_id="r1")],
    )
    info = TaskInfo.from_proto(task)
    assert (info.dead_letter_reason, info.redrive_id, info.redriven_from_attempt) == (
        DeadLetterReason.NOT_RETRYABLE,
        "r1",
        1,
    )
    assert (info.failures[0].group_id, info.failures[0].redrive_id) == ("g1", "r1")
