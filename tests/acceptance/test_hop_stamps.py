"""Hop stamps: a task submitted with the `taskyard-hops` metadata comes back from
WaitTask with the times it reached and left every process on its trip, in order
(what `bench/latency --breakdown` prints); any other task carries none."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import duration_pb2

from taskyard.bus.v1.task_record_pb2 import HopStamp
from taskyard.core import hops
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance


def _run(stub: Any, *, sampled: bool) -> tuple[task_service_pb2.WaitTaskResponse, dict[str, str]]:
    spec = task_pb2.TaskSpec(name="add")
    spec.args.extend([2, 3])
    sub = stub.SubmitTask(
        task_service_pb2.SubmitTaskRequest(task=spec),
        metadata=((hops.METADATA_KEY, "1"),) if sampled else None,
    )
    reply, call = stub.WaitTask.with_call(
        task_service_pb2.WaitTaskRequest(id=sub.task.id, timeout=duration_pb2.Duration(seconds=20))
    )
    return reply, dict(call.trailing_metadata() or ())


def test_a_sampled_task_returns_its_trip_through_every_process(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    reply, trailing = _run(stub, sampled=True)
    assert reply.task.state == task_pb2.TASK_STATE_SUCCESS
    trip = hops.from_text(trailing[hops.METADATA_KEY])
    names = [hop for hop, _ in trip]
    assert names[0] == "gateway.received"
    assert names[-1] == "gateway.replied"
    assert {hop.split(".")[0] for hop in names} >= {"gateway", "scheduler", "store", "pool", "worker"}
    assert names.count("store.committed") == 2  # the insert, then the outcome
    times = [at for _, at in trip]
    assert times == sorted(times), trip


def test_an_unsampled_task_carries_no_stamps(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    reply, trailing = _run(stub, sampled=False)
    assert reply.task.result.number_value == 5
    assert hops.METADATA_KEY not in trailing


def test_stamp_text_round_trips_and_skips_what_is_malformed() -> None:
    stamps = [HopStamp(hop="store.committed", at_ns=17), HopStamp(hop="a.b", at_ns=3)]
    text = hops.to_text(stamps)
    assert hops.from_text(text) == [("store.committed", 17), ("a.b", 3)]
    assert hops.from_text(text + ",junk,x=,=4,y=-1") == [("store.committed", 17), ("a.b", 3)]
