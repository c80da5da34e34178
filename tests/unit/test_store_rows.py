"""The store's per-row conversions on the hot path: records and events from rows,
the events' wire batches, the insert check's fast path against the full rules,
and which completion refs count as refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskyard.bus.v1 import event_pb2, leases_pb2, task_record_pb2, tasks_pb2
from taskyard.core import errors
from taskyard.result_store import events as store_events
from taskyard.result_store import records
from taskyard.result_store.queries import Q
from taskyard.result_store.writes import insert_checks, reports
from taskyard.result_store.writes.insert_row import InsertRow
from taskyard.result_store.writes.refs import _Refs
from taskyard.v1 import limit_pb2, task_pb2

TID = "0190f5b4-1c2d-7e3f-8a9b-0c1d2e3f4a5b"
OTHER = "0190f5b4-1c2d-7e3f-8a9b-0c1d2e3f4a5c"


def row(**over: Any) -> dict[str, Any]:
    """A row as ``{{record}}`` selects it: a task that just succeeded."""
    base: dict[str, Any] = {
        "id": TID,
        "name": "noop",
        "args": "[]",
        "kwargs": "{}",
        "priority": 3,
        "queue": "default",
        "timeout_ms": 0,
        "max_retries": -1,
        "request_id": "",
        "parent_id": "",
        "root_id": "",
        "labels": "{}",
        "state": "SUCCESS",
        "attempt": 1,
        "result": "null",
        "failure_type": None,
        "failure_message": None,
        "failure_traceback": None,
        "failure_attempt": None,
        "created_at_us": 10,
        "started_at_us": 11,
        "finished_at_us": 12,
        "updated_at_us": 12,
        "worker_id": "pool/1",
        "cancel_requested": False,
        "run_at_us": None,
        "trace_headers": "{}",
        "lease_token": "",
        "pool_id": "pool",
        "resume_requested": False,
        "depends_on": [],
        "idempotency_key": "",
        "context": "{}",
        "cancel_reason": "",
        "cancel_step": 0,
        "rescues": 0,
        "schedule_id": "",
        "idempotency_expires_at_us": None,
        "uncharged_attempts": 0,
        "late_reports": 0,
        "late_attempt": 0,
        "flow": None,
        "redrive_id": "",
        "redriven_from_attempt": 0,
        "tenant": "",
    }
    base.update(over)
    return base


def every_field_set() -> dict[str, Any]:
    return row(
        args="[1]",
        kwargs='{"a": 2}',
        timeout_ms=5000,
        max_retries=3,
        request_id="req",
        parent_id=OTHER,
        root_id=OTHER,
        labels='{"team": "x", "n": 3}',
        state="FAILURE",
        attempt=2,
        result="",
        failure_type="ValueError",
        failure_message="boom",
        failure_traceback="tb",
        failure_attempt=2,
        cancel_requested=True,
        run_at_us=99,
        trace_headers='{"traceparent": "00-ab"}',
        lease_token="tok",
        resume_requested=True,
        depends_on=[OTHER],
        idempotency_key="key",
        context='{"k": 1}',
        cancel_reason="why",
        cancel_step=2,
        rescues=1,
        schedule_id=OTHER,
        idempotency_expires_at_us=77,
        uncharged_attempts=1,
        late_reports=2,
        late_attempt=1,
        flow=FLOW.SerializeToString(),
        redrive_id=OTHER,
        redriven_from_attempt=1,
        tenant="acme",
    )


# A task's flow control, as the flow column keeps it serialized.
FLOW = task_record_pb2.FlowControl(
    fairness_key="tenant:a", uses=[limit_pb2.LimitUse(limit="per-customer", key="c1", units=2)]
)


def test_record_from_row_sets_every_column() -> None:
    rec = records.record_from_row(every_field_set())
    assert rec == task_record_pb2.TaskRecord(
        id=TID,
        name="noop",
        args_json=b"[1]",
        kwargs_json=b'{"a": 2}',
        priority=task_pb2.PRIORITY_NORMAL,
        queue="default",
        timeout_ms=5000,
        max_retries=3,
        request_id="req",
        parent_id=OTHER,
        root_id=OTHER,
        labels={"team": "x", "n": "3"},
        state=task_pb2.TASK_STATE_FAILURE,
        attempt=2,
        failure=task_pb2.TaskFailure(type="ValueError", message="boom", traceback="tb", attempt=2),
        created_at_us=10,
        started_at_us=11,
        finished_at_us=12,
        updated_at_us=12,
        worker_id="pool/1",
        cancel_requested=True,
        run_at_us=99,
        trace_headers={"traceparent": "00-ab"},
        lease_token="tok",
        pool_id="pool",
        resume_requested=True,
        depends_on=[OTHER],
        idempotency_key="key",
        context_json=b'{"k": 1}',
        cancel_reason="why",
        cancel_step=task_pb2.CANCEL_STEP_FLAG,
        rescues=1,
        schedule_id=OTHER,
        idempotency_expires_at_us=77,
        uncharged_attempts=1,
        late_reports=2,
        late_attempt=1,
        flow=FLOW,
        redrive_id=OTHER,
        redriven_from_attempt=1,
        tenant="acme",
    )


def test_record_from_row_leaves_defaults_unset() -> None:
    rec = records.record_from_row(row(state="QUEUED", result="", started_at_us=None, worker_id=""))
    assert rec == task_record_pb2.TaskRecord(
        id=TID,
        name="noop",
        args_json=b"[]",
        kwargs_json=b"{}",
        priority=task_pb2.PRIORITY_NORMAL,
        queue="default",
        max_retries=-1,
        state=task_pb2.TASK_STATE_QUEUED,
        attempt=1,
        created_at_us=10,
        finished_at_us=12,
        updated_at_us=12,
        pool_id="pool",
    )
    assert not rec.HasField("failure") and not rec.HasField("flow")


def test_add_record_builds_in_place() -> None:
    reply = leases_pb2.LeaseTasksReply()
    rec = records.add_record(reply.tasks, every_field_set())
    assert list(reply.tasks) == [records.record_from_row(every_field_set())]
    rec.name = "renamed"  # the record returned is the reply's own
    assert reply.tasks[0].name == "renamed"


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"lease_token": "tok"},
        {
            "state": "FAILURE",
            "result": "",
            "failure_type": "E",
            "failure_message": "m",
            "failure_traceback": "t",
        },
        {"state": "CANCELLED", "cancel_step": 2, "labels": '{"a": "b"}'},
        {"state": "RETRYING", "run_at_us": 500, "failure_type": "E", "failure_message": ""},
        {"state": "SCHEDULED", "run_at_us": 600},
        {"state": "ASSIGNED", "lease_token": "tok"},
        {"state": "RUNNING", "worker_id": ""},
    ],
)
def test_record_and_event_match_the_record_they_describe(over: dict[str, Any]) -> None:
    r = row(**over)
    rec, ev = records.record_and_event(r)
    assert rec == records.record_from_row(r)
    assert records.event_for_record_row(r, rec) == ev == records.event_for_record(rec)
    assert ev.task_id == TID and ev.state == rec.state and ev.attempt == rec.attempt
    assert ev.at_us == rec.updated_at_us and ev.worker_id == rec.worker_id and ev.priority == rec.priority
    due = rec.state in (task_pb2.TASK_STATE_SCHEDULED, task_pb2.TASK_STATE_RETRYING)
    assert ev.run_at_us == (rec.run_at_us if due else 0)
    final = rec.state in (
        task_pb2.TASK_STATE_SUCCESS,
        task_pb2.TASK_STATE_FAILURE,
        task_pb2.TASK_STATE_CANCELLED,
    )
    assert ev.HasField("record") == final
    if final:
        expected = task_record_pb2.TaskRecord()
        expected.CopyFrom(rec)
        expected.lease_token = ""  # fencing data stays in the store
        assert ev.record == expected
    assert records.record_and_event(r, "task.assigned")[1].type == "task.assigned"


def test_final_event_record_limit_counts_result_bytes() -> None:
    limit = records.EVENT_RECORD_LIMIT
    ascii_fits = row(result='"' + "e" * (limit - 2) + '"')
    assert records.record_and_event(ascii_fits)[1].HasField("record")
    # Two UTF-8 bytes a character: the same length in characters is over the limit.
    wide = row(result='"' + "é" * (limit - 2) + '"')
    rec, ev = records.record_and_event(wide)
    assert len(rec.result_json) > limit and not ev.HasField("record")
    failed = row(
        state="FAILURE",
        result="",
        failure_type="E",
        failure_message="m" * (limit // 2),
        failure_traceback="t" * (limit // 2 + 1),
    )
    assert not records.record_and_event(failed)[1].HasField("record")


def test_event_leaves_defaults_unset() -> None:
    ev = records.event(
        "task.queued", task_id=TID, state="QUEUED", attempt=1, name="noop", at_us=5, priority=3
    )
    assert ev == event_pb2.Event(
        type="task.queued",
        task_id=TID,
        state=task_pb2.TASK_STATE_QUEUED,
        attempt=1,
        name="noop",
        at_us=5,
        priority=task_pb2.PRIORITY_NORMAL,
    )
    assert records.event("worker.heartbeat", worker_id="p", at_us=1) == event_pb2.Event(
        type="worker.heartbeat", worker_id="p", at_us=1
    )


def test_record_columns_are_the_fragments_in_order() -> None:
    # Top-level commas of the fragment separate its columns; each is named by its
    # alias, or by the column itself.
    columns, depth, start = [], 0, 0
    text = Q["record"]
    for i, ch in enumerate(text + ","):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            columns.append(text[start:i].strip())
            start = i + 1
    names = tuple(c.rsplit(" AS ", 1)[1] if " AS " in c else c.removeprefix("t.") for c in columns)
    assert names == records.RECORD_COLUMNS
    assert tuple(row()) == records.RECORD_COLUMNS


@pytest.mark.parametrize("fields", [{}, {"state": "RUNNING", "lease_token": "tok"}, "all"])
def test_reading_by_position_is_reading_by_name(fields: Any) -> None:
    r = every_field_set() if fields == "all" else row(**fields)
    extra = {**r, "ref_token": "tok", "ref_attempt": 1}  # what the reports' statements add
    assert records.in_record_order([extra])
    assert not records.in_record_order([])
    assert not records.in_record_order([{"state": "x", **r}])
    assert records.record_and_event(extra, ordered=True) == records.record_and_event(r)
    a, b = leases_pb2.LeaseTasksReply(), leases_pb2.LeaseTasksReply()
    records.add_record(a.tasks, extra, ordered=True)
    records.add_record(b.tasks, r)
    assert a == b


# --- the events' wire batches -------------------------------------------------------
def test_batch_entries_are_an_event_batch() -> None:
    _, final = records.record_and_event(row(result='"' + "x" * 20_000 + '"'))
    events = [
        event_pb2.Event(type="task.queued", task_id=TID),  # one-byte length
        event_pb2.Event(type="task.started", task_id=TID, name="n" * 200),  # two-byte length
        final,  # three-byte length
        event_pb2.Event(),  # empty
    ]
    data = b"".join(store_events._batch_entry(ev) for ev in events)
    assert data == event_pb2.EventBatch(events=events).SerializeToString()
    parsed = event_pb2.EventBatch()
    parsed.ParseFromString(data)
    assert list(parsed.events) == events


# --- the insert check's fast path -----------------------------------------------------
def gateway_record(**over: Any) -> task_record_pb2.TaskRecord:
    rec = task_record_pb2.TaskRecord(
        id=TID,
        name="noop",
        state=task_pb2.TASK_STATE_QUEUED,
        attempt=1,
        priority=task_pb2.PRIORITY_NORMAL,
        queue="default",
        max_retries=-1,
        args_json=b"[]",
        kwargs_json=b"{}",
        created_at_us=1_700_000_000_000_000,
    )
    for key, value in over.items():
        field = getattr(rec, key)
        if key in ("labels", "trace_headers"):
            field.update(value)
        elif key == "depends_on":
            field.extend(value)
        else:
            setattr(rec, key, value)
    return rec


DAY_US = 24 * 3600 * 1_000_000
CASES: list[dict[str, Any]] = [
    {},
    {"priority": 0, "queue": "", "attempt": 0, "state": 0},
    {"args_json": b"", "kwargs_json": b""},
    {"args_json": b'[1, "two", {"three": [3]}]', "kwargs_json": b'{"a": null}'},
    {"labels": {"team": "x"}, "trace_headers": {"traceparent": "00-ab"}},
    {"parent_id": OTHER, "root_id": OTHER},
    {"parent_id": OTHER.upper()},
    {"root_id": "{" + OTHER + "}"},
    {"id": TID.upper()},
    {"id": "not-a-uuid"},
    {"root_id": "nope"},
    {"parent_id": "nope"},
    {"state": task_pb2.TASK_STATE_PENDING, "depends_on": [OTHER, OTHER.upper()]},
    {"state": task_pb2.TASK_STATE_SCHEDULED, "run_at_us": 1_700_000_000_000_000 + DAY_US},
    {"state": task_pb2.TASK_STATE_RUNNING},
    {"name": ""},
    {"name": "unknown"},
    {"name": "n" * 256},
    {"name": "no\x00pe"},
    {"args_json": b"{}"},
    {"args_json": b"[1,"},
    {"args_json": b'["\\u0000"]'},
    {"args_json": b"[NaN]"},
    {"args_json": b"[" * 200 + b"]" * 200},
    {"kwargs_json": b"[]"},
    {"kwargs_json": b"\xff"},
    {"args_json": b"[" + b"1," * 40 + b"1]"},
    {"priority": 9},
    {"queue": "q" * 256},
    {"queue": "q\x00"},
    {"timeout_ms": -1},
    {"timeout_ms": 24 * 3600 * 1000 + 1},
    {"timeout_ms": 24 * 3600 * 1000},
    {"max_retries": -2},
    {"max_retries": 101},
    {"max_retries": 100},
    {"request_id": "r" * 256},
    {"request_id": "r\x00"},
    {"labels": {f"k{i}": "v" for i in range(65)}},
    {"labels": {"k" * 64: "v"}},
    {"labels": {"k": "v" * 256}},
    {"labels": {"k": "v\x00"}},
    {"trace_headers": {f"h{i}": "v" for i in range(9)}},
    {"trace_headers": {"h": "v" * 8193}},
    {"run_at_us": 1_700_000_000_000_000 + 366 * DAY_US},
    {"created_at_us": 0, "run_at_us": 1},
    {"idempotency_key": "k", "idempotency_expires_at_us": 1_700_000_000_000_000 + DAY_US},
    {"idempotency_key": "k", "idempotency_expires_at_us": 1},
    {"depends_on": ["nope"]},
]


def check(tasks: list[task_record_pb2.TaskRecord], *, max_payload_bytes: int = 1 << 20) -> Any:
    try:
        return insert_checks.validate_insert(
            tasks_pb2.InsertTasksRequest(tasks=tasks),
            known_names={"noop"},
            max_payload_bytes=max_payload_bytes,
            now_us=1_700_000_000_000_000,
        )
    except errors.TaskyardError as exc:
        return (exc.code, exc.reason, exc.message, exc.violations)


@pytest.mark.parametrize("over", CASES, ids=lambda over: json.dumps(over, default=repr)[:60])
def test_fast_path_agrees_with_the_full_rules(over: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [gateway_record(), gateway_record(**over)]
    fast = check(tasks)
    small = check(tasks, max_payload_bytes=20)
    monkeypatch.setattr(insert_checks, "_plain_params", lambda *args: None)
    assert check(tasks) == fast
    assert check(tasks, max_payload_bytes=20) == small


def test_insert_rows_name_what_the_insert_statements_take() -> None:
    (row,) = check([gateway_record(parent_id=OTHER, request_id="r", labels={"team": "x"})])
    assert isinstance(row, InsertRow)
    assert (row.id, row.parent_id, row.root_id, row.request_id) == (TID, OTHER, None, "r")
    assert (row.labels, row.state, row.depends_on) == ('{"team": "x"}', "QUEUED", "{}")
    assert not row.has_dependencies and row.dependencies() == []
    (pending,) = check(
        [
            gateway_record(
                state=task_pb2.TASK_STATE_PENDING,
                depends_on=[OTHER, OTHER.upper()],
                idempotency_key="k",
                idempotency_expires_at_us=1_700_000_000_000_000 + DAY_US,
            )
        ]
    )
    assert pending.has_dependencies and pending.dependencies() == [OTHER]
    assert (pending.state, pending.idempotency_key) == ("PENDING", "k")
    assert pending.idempotency_expires_at_us == 1_700_000_000_000_000 + DAY_US


def test_flow_is_checked_and_kept_serialized_with_its_limit_names() -> None:
    plain, empty, used = gateway_record(), gateway_record(), gateway_record()
    empty.flow.SetInParent()
    used.flow.CopyFrom(FLOW)
    used.flow.uses.add(limit="a b", units=0)
    rows = check([plain, empty, used])
    assert [(r.flow, r.limit_names) for r in rows[:2]] == [(None, None), (None, None)]
    assert task_record_pb2.FlowControl.FromString(rows[2].flow) == used.flow
    assert rows[2].limit_names == '{"per-customer","a b"}'
    # Not the fast path's: the full rules check it (core/limits.use_violations).
    assert insert_checks._plain_params(used, None, 1 << 20, 0) is None
    used.flow.uses.add(limit="per-customer", units=-1)
    code, _, _, violations = check([used])
    assert code is errors.Code.INVALID_ARGUMENT
    assert [v.field for v in violations] == ["tasks[0].flow.uses[2].limit", "tasks[0].flow.uses[2].units"]


def test_fast_path_takes_the_gateways_records() -> None:
    for over in CASES[:6]:
        rec = gateway_record(**over)
        assert insert_checks._plain_params(rec, {"noop"}, 1 << 20, 0) is not None, over
        assert insert_checks._plain_params(rec, None, 1 << 20, 0) is not None, over
    assert insert_checks._plain_params(gateway_record(), {"other"}, 1 << 20, 0) is None


# --- refused completions ----------------------------------------------------------------
def refs_of(*keys: tuple[str, int, str]) -> _Refs:
    refs = _Refs()
    for tid, attempt, token in keys:
        refs.add(0, task_record_pb2.AttemptRef(task_id=tid, attempt=attempt, lease_token=token))
    return refs


def applied(*keys: tuple[str, int, str]) -> list[Any]:
    return [{"id": tid, "ref_attempt": attempt, "ref_token": token} for tid, attempt, token in keys]


def test_refused_is_what_no_statement_applied() -> None:
    a, b = (TID, 1, "t"), (OTHER, 1, "t")
    assert reports._refused([(refs_of(a, b), applied(a, b))]) == set()
    assert reports._refused([(refs_of(a, b), applied(a))]) == {b}
    # The same ref asked twice and applied once is not refused.
    assert reports._refused([(refs_of(a, a), applied(a))]) == set()
    # One statement applied what another was refused (a success and a failure
    # reported for the same attempt).
    assert reports._refused([(refs_of(a), applied(a)), (refs_of(a, b), applied(b))]) == set()
    assert reports._refused([(refs_of(a), applied()), (refs_of(b), applied(b))]) == {a}
    assert reports._refused([]) == set()


def test_a_sampled_tasks_stamps_go_on_its_event_not_on_the_cached_record() -> None:
    from taskyard.bus.v1 import task_record_pb2
    from taskyard.result_store.writes import reports

    rec, ev = records.record_and_event(row())
    trip = [task_record_pb2.HopStamp(hop="worker.finished", at_ns=5)]
    (stamped,) = reports._carry_trips([ev], {ev.task_id: trip})
    assert [h.hop for h in ev.record.hops] == ["worker.finished"]
    assert stamped.hops[0].at_ns == 5
    assert not rec.hops  # the record the cache keeps
    assert rec.id == ev.record.id
