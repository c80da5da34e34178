"""The transition table (taskyard.core.states) is the single source of truth for
task states: these tests keep it self-consistent and in line with the proto."""

from __future__ import annotations

from collections import deque

import pytest

from taskyard.core import states
from taskyard.core.states import (
    FINAL_STATES,
    IMMUTABLE_STATES,
    INITIAL_STATES,
    LEASED_STATES,
    TRANSITIONS,
    TaskState,
    WorkerState,
    can_transition,
    db_names,
    sources_of,
)
from taskyard.v1 import task_pb2

S = TaskState
ALL = frozenset(TaskState)


def reachable_from(starts: frozenset[TaskState]) -> set[TaskState]:
    seen = set(starts)
    todo = deque(starts)
    while todo:
        for nxt in TRANSITIONS[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_nine_seed_states() -> None:
    assert [s.name for s in TaskState] == [
        "PENDING",
        "QUEUED",
        "SCHEDULED",
        "ASSIGNED",
        "RUNNING",
        "SUCCESS",
        "FAILURE",
        "RETRYING",
        "CANCELLED",
    ]


def test_states_mirror_the_public_proto_value_for_value() -> None:
    proto = {v.name: v.number for v in task_pb2.DESCRIPTOR.enum_types_by_name["TaskState"].values}
    assert proto.pop("TASK_STATE_UNSPECIFIED") == 0
    assert proto == {f"TASK_STATE_{s.name}": int(s) for s in TaskState}


def test_table_covers_every_state_with_known_targets() -> None:
    assert set(TRANSITIONS) == ALL
    for source, targets in TRANSITIONS.items():
        assert targets <= ALL, source
        assert source not in targets, f"{source.name} -> itself is not a transition"


def test_final_states() -> None:
    assert frozenset({S.SUCCESS, S.FAILURE, S.CANCELLED}) == FINAL_STATES
    assert frozenset({S.SUCCESS, S.CANCELLED}) == IMMUTABLE_STATES
    for s in TaskState:
        assert s.is_final == (s in FINAL_STATES)


def test_final_states_have_no_exits_except_manual_retry_of_a_failure() -> None:
    for s in IMMUTABLE_STATES:
        assert TRANSITIONS[s] == frozenset(), f"{s.name} must be immutable"
    assert TRANSITIONS[S.FAILURE] == frozenset({S.QUEUED, S.RETRYING}), (
        "FAILURE only leaves by a manual retry, or a circuit breaker's refund"
    )


def test_initial_and_leased_states() -> None:
    assert frozenset({S.PENDING, S.QUEUED, S.SCHEDULED}) == INITIAL_STATES
    assert not (INITIAL_STATES & FINAL_STATES)
    assert frozenset({S.ASSIGNED, S.RUNNING}) == LEASED_STATES
    # A task is leased only through dispatch: QUEUED -> ASSIGNED -> RUNNING.
    assert sources_of(S.ASSIGNED) == (S.QUEUED,)
    assert sources_of(S.RUNNING) == (S.ASSIGNED,)


@pytest.mark.parametrize("target", list(TaskState), ids=lambda s: s.name)
def test_sources_of_agrees_with_the_table(target: TaskState) -> None:
    expected = {s for s in TaskState if target in TRANSITIONS[s]}
    got = sources_of(target)
    assert set(got) == expected
    assert len(got) == len(set(got)), "no duplicates"
    assert list(got) == sorted(got), "stable order (for SQL and caching)"
    for source in TaskState:
        assert can_transition(source, target) == (source in expected)


def test_every_state_is_reachable_from_an_initial_state() -> None:
    unreachable = ALL - reachable_from(INITIAL_STATES)
    assert not unreachable, f"unreachable states: {sorted(s.name for s in unreachable)}"


def test_every_non_initial_state_has_a_way_in() -> None:
    for s in ALL - INITIAL_STATES:
        assert sources_of(s), f"{s.name} has no source state"


def test_every_state_can_end() -> None:
    for s in TaskState:
        assert reachable_from(frozenset({s})) & FINAL_STATES, f"{s.name} can never become final"


def test_every_waiting_state_can_be_cancelled() -> None:
    for s in ALL - FINAL_STATES:
        assert can_transition(s, S.CANCELLED), f"{s.name} cannot be cancelled"


def test_a_task_runs_only_after_being_leased() -> None:
    # An attempt's outcome comes from a leased state (ASSIGNED when the outcome
    # overtook the start notice), never from a waiting state.
    assert set(sources_of(S.SUCCESS)) == LEASED_STATES
    # RETRYING from FAILURE too: a circuit breaker's refund, not an attempt's outcome.
    assert set(sources_of(S.RETRYING)) == LEASED_STATES | {S.FAILURE}
    assert set(sources_of(S.FAILURE)) <= LEASED_STATES


def test_db_names_are_sorted_enum_names() -> None:
    assert db_names(frozenset({S.RUNNING, S.ASSIGNED})) == ["ASSIGNED", "RUNNING"]
    assert db_names(sources_of(S.QUEUED)) == sorted(s.name for s in sources_of(S.QUEUED))
    assert all(s.db_name == s.name for s in TaskState)


def test_worker_lifecycle_has_the_six_seed_states() -> None:
    assert [w.value for w in WorkerState] == [
        "INIT",
        "STARTING",
        "RUNNING",
        "DRAINING",
        "STOPPING",
        "STOPPED",
    ]


def test_module_exports_one_table() -> None:
    # Everyone must use this mapping, so it must not be mutable by accident.
    assert all(isinstance(v, frozenset) for v in states.TRANSITIONS.values())
