"""Dependencies, children, trees, idempotency keys and cancellation against a real
cluster over gRPC (gateway, scheduler, store and a pool as processes)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from support.waiting import wait_until

from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

S = task_pb2
TS = task_service_pb2
FINAL = {S.TASK_STATE_SUCCESS, S.TASK_STATE_FAILURE, S.TASK_STATE_CANCELLED}


def stub(cluster: Any) -> task_service_pb2_grpc.TaskServiceStub:
    return task_service_pb2_grpc.TaskServiceStub(cluster.channel())


def spec(name: str, *args: Any, **fields: Any) -> task_pb2.TaskSpec:
    s = task_pb2.TaskSpec(name=name, **fields)
    if args:
        s.args.CopyFrom(struct_pb2.ListValue())
        s.args.extend(list(args))
    return s


def submit(api: Any, name: str, *args: Any, **fields: Any) -> TS.SubmitTaskResponse:
    reply: TS.SubmitTaskResponse = api.SubmitTask(TS.SubmitTaskRequest(task=spec(name, *args, **fields)))
    return reply


def wait(api: Any, task_id: str, timeout: float = 30.0) -> task_pb2.Task:
    reply = api.WaitTask(
        TS.WaitTaskRequest(id=task_id, timeout=duration_pb2.Duration(seconds=int(timeout))),
        timeout=timeout + 5,
    )
    assert not reply.timed_out, reply
    task: task_pb2.Task = reply.task
    return task


def state_of(api: Any, task_id: str) -> int:
    state: int = api.GetTask(TS.GetTaskRequest(id=task_id)).task.state
    return state


def test_chain_runs_in_order_and_a_failure_cancels_the_rest(cluster: Any) -> None:
    api = stub(cluster)
    a = submit(api, "sleep", 0.3).task
    b = submit(api, "add", 1, 2, depends_on=[a.id]).task
    c = submit(api, "add", 3, 4, depends_on=[b.id]).task
    assert (b.state, c.state) == (S.TASK_STATE_PENDING, S.TASK_STATE_PENDING)
    assert list(c.depends_on) == [b.id]
    done_c = wait(api, c.id)
    done_a, done_b = wait(api, a.id), wait(api, b.id)
    assert [t.state for t in (done_a, done_b, done_c)] == [S.TASK_STATE_SUCCESS] * 3
    # In order: each started after the one before it finished.
    assert done_b.started_at.ToMicroseconds() >= done_a.finished_at.ToMicroseconds()
    assert done_c.started_at.ToMicroseconds() >= done_b.finished_at.ToMicroseconds()

    # B fails: C is cancelled with the reason, and D after C too.
    a2 = submit(api, "add", 1, 1).task
    b2 = submit(api, "fail", "on purpose", depends_on=[a2.id], max_retries=0).task
    c2 = submit(api, "add", 1, 1, depends_on=[b2.id]).task
    d2 = submit(api, "add", 1, 1, depends_on=[c2.id]).task
    got_c2, got_d2 = wait(api, c2.id), wait(api, d2.id)
    assert wait(api, b2.id).state == S.TASK_STATE_FAILURE
    assert got_c2.state == S.TASK_STATE_CANCELLED
    assert got_c2.cancel_reason == f"dependency {b2.id} failed"
    assert got_c2.cancel_step == S.CANCEL_STEP_NOT_STARTED
    assert got_d2.cancel_reason == f"dependency {c2.id} cancelled"


def test_unknown_dependency_is_refused_with_a_field_violation(cluster: Any) -> None:
    api = stub(cluster)
    ghost = "01a22d80-0000-7000-8000-000000000000"
    with pytest.raises(grpc.RpcError) as info:
        submit(api, "add", 1, 1, depends_on=[ghost])
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "task.depends_on[0]" in (info.value.details() or "")
    with pytest.raises(grpc.RpcError) as info:
        submit(api, "add", 1, 1, depends_on=["nope"])
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_children_tree_and_cli(cluster: Any) -> None:
    api = stub(cluster)
    root = submit(api, "fan_out", 2).task
    done = wait(api, root.id)
    assert done.state == S.TASK_STATE_SUCCESS, done
    kids = [v.string_value for v in done.result.list_value.values]
    assert len(kids) == 2
    after = submit(api, "add", 5, 5, depends_on=kids).task
    for k in kids:
        child = wait(api, k)
        assert child.parent_id == root.id and child.root_id == root.id
    assert wait(api, after.id).state == S.TASK_STATE_SUCCESS

    tree = api.GetTaskTree(TS.GetTaskTreeRequest(id=kids[1]))
    assert tree.root_id == root.id and not tree.truncated
    assert [(n.task.id, n.depth) for n in tree.nodes] == [(root.id, 0), (kids[0], 1), (kids[1], 1)]
    assert list(tree.nodes[2].path) == [root.id, kids[1]]

    proc = subprocess.run(
        [sys.executable, "-m", "taskyard.cli", "task", "tree", kids[0], "--target", cluster.target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith(f"{root.id}  SUCCESS") and out[0].endswith("fan_out")
    assert out[1].startswith(f"  {kids[0]}  SUCCESS") and "add" in out[1]
    assert out[2].startswith(f"  {kids[1]}  SUCCESS")

    # A dependency chain in the CLI: "after:".
    dep_tree = subprocess.run(
        [sys.executable, "-m", "taskyard.cli", "task", "tree", after.id, "--target", cluster.target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert dep_tree.stdout.strip() == f"{after.id}  SUCCESS    add  after: {', '.join(kids)}"

    with pytest.raises(grpc.RpcError) as info:
        api.GetTaskTree(TS.GetTaskTreeRequest(id="01a22d80-0000-7000-8000-000000000000"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_sync_task_submits_a_child(cluster: Any) -> None:
    api = stub(cluster)
    parent = wait(api, submit(api, "spawn_sync", 1).task.id)
    assert parent.state == S.TASK_STATE_SUCCESS, parent
    (kid,) = [v.string_value for v in parent.result.list_value.values]
    child = wait(api, kid)
    assert child.parent_id == parent.id and child.result.number_value == 1


def test_idempotency_key_repeat_concurrent_and_after_the_window(cluster: Any) -> None:
    api = stub(cluster)
    first = submit(api, "add", 2, 3, idempotency_key="order-7")
    assert first.created
    wait(api, first.task.id)
    again = submit(api, "add", 2, 3, idempotency_key="order-7")
    assert not again.created and again.task.id == first.task.id
    assert again.task.state == S.TASK_STATE_SUCCESS and again.task.result.number_value == 5

    def one(_: int) -> TS.SubmitTaskResponse:
        return submit(stub(cluster), "add", 1, 1, idempotency_key="burst")

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(one, range(16)))
    assert len({r.task.id for r in replies}) == 1
    assert sum(r.created for r in replies) == 1

    window = duration_pb2.Duration(nanos=500_000_000)
    short = submit(api, "add", 1, 2, idempotency_key="short", idempotency_window=window)
    assert short.created
    # The database's clock decides when the window is over: wait until it says so.
    wait_until(
        lambda: (
            not cluster.query(
                "SELECT idempotency_expires_at > now() AS live FROM tasks WHERE id = $1::uuid", short.task.id
            )[0]["live"]
        ),
        10,
        "the database to see the idempotency window over",
    )
    fresh = submit(api, "add", 1, 2, idempotency_key="short", idempotency_window=window)
    assert fresh.created and fresh.task.id != short.task.id


def test_cancel_queued_scheduled_and_pending(cluster: Any) -> None:
    api = stub(cluster)
    later = timestamp_pb2.Timestamp()
    later.FromSeconds(int(time.time()) + 3600)
    scheduled = submit(api, "add", 1, 1, eta=later).task
    blocker = submit(api, "sleep", 5).task
    pending = submit(api, "add", 1, 1, depends_on=[blocker.id]).task
    for t in (scheduled, pending):
        reply = api.CancelTask(TS.CancelTaskRequest(id=t.id, reason="not needed"))
        assert reply.cancelled and reply.step == S.CANCEL_STEP_NOT_STARTED
        assert reply.task.state == S.TASK_STATE_CANCELLED and reply.task.cancel_reason == "not needed"
    # A queued one: the pool's slots are all busy, so it waits in its lane.
    hogs = [submit(api, "sleep", 5).task for _ in range(4)]
    queued = submit(api, "add", 1, 1).task
    assert state_of(api, queued.id) == S.TASK_STATE_QUEUED
    reply = api.CancelTask(TS.CancelTaskRequest(id=queued.id))
    assert reply.cancelled and reply.task.state == S.TASK_STATE_CANCELLED
    with pytest.raises(grpc.RpcError) as info:
        api.CancelTask(TS.CancelTaskRequest(id=queued.id))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    for t in [blocker, *hogs]:
        api.CancelTask(TS.CancelTaskRequest(id=t.id))
    with pytest.raises(grpc.RpcError) as info:
        api.CancelTask(TS.CancelTaskRequest(id=queued.id, wait=duration_pb2.Duration(seconds=301)))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as info:
        api.GetTaskTree(TS.GetTaskTreeRequest(id="not-an-id"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.cluster(concurrency=8)
def test_cancelling_a_parent_cancels_its_children(cluster: Any) -> None:
    api = stub(cluster)
    parent = submit(api, "parent_sleep", 30, 2).task

    def children() -> list[task_pb2.Task]:
        tree = api.GetTaskTree(TS.GetTaskTreeRequest(id=parent.id))
        kids = [n.task for n in tree.nodes if n.depth == 1]
        return kids if len(kids) == 2 else []

    kids = wait_until(children, 20, "the parent's two children")
    reply = api.CancelTask(
        TS.CancelTaskRequest(id=parent.id, reason="stop all", wait=duration_pb2.Duration(seconds=20)),
        timeout=30,
    )
    assert sorted(reply.cancelled_children) == sorted(k.id for k in kids)
    for k in kids:
        got = wait(api, k.id)
        assert got.state == S.TASK_STATE_CANCELLED, got
        assert got.cancel_reason == f"parent {parent.id} cancelled"
    # The parent was running: the pool stopped it, and the answer says how (or
    # NOT_STARTED when its start notice had not reached the store: still ASSIGNED).
    assert reply.cancelled
    assert reply.step in (
        S.CANCEL_STEP_NOT_STARTED,
        S.CANCEL_STEP_FLAG,
        S.CANCEL_STEP_ASYNCIO,
        S.CANCEL_STEP_KILL,
    )
    final = wait(api, parent.id)
    assert final.state == S.TASK_STATE_CANCELLED, json.dumps(str(final))


def cli(cluster: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskyard.cli", "task", *args, "--target", cluster.target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_and_python_client(cluster: Any) -> None:
    client = cluster.client()
    a = client.submit("sleep", 30)
    proc = cli(cluster, "submit", "add", "1", "2", "--depends-on", a.id, "--output", "json")
    assert proc.returncode == 0, proc.stderr
    b = json.loads(proc.stdout)["task"]
    assert b["state"] == "TASK_STATE_PENDING" and b["depends_on"] == [a.id]
    shown = cli(cluster, "get", b["id"])
    assert "after:" in shown.stdout and a.id in shown.stdout
    cancelled = cli(cluster, "cancel", b["id"], "--reason", "changed my mind")
    assert cancelled.returncode == 0, cancelled.stderr
    assert "cancel_reason:" in cancelled.stdout
    assert re.search(r"step:\s+NOT_STARTED", cancelled.stdout), cancelled.stdout

    first = cli(cluster, "submit", "add", "2", "2", "--idempotency-key", "cli-k", "--output", "json")
    again = cli(cluster, "submit", "add", "2", "2", "--idempotency-key", "cli-k", "--output", "json")
    assert json.loads(first.stdout)["task"]["id"] == json.loads(again.stdout)["task"]["id"]

    child_dep = client.submit("add", 1, 1, depends_on=[a.id], idempotency_key="py-k", idempotency_window=60)
    assert child_dep.depends_on == (a.id,) and child_dep.idempotency_key == "py-k"
    assert client.submit("add", 1, 1, idempotency_key="py-k").id == child_dep.id
    parent = client.submit("parent_sleep", 30, 1)
    wait_until(lambda: len(client.tree(parent.id).nodes) >= 2, 20, "the parent's child")
    tree = client.tree(parent.id)
    assert tree.root_id == parent.id and [n.depth for n in tree.nodes] == [0, 1]
    outcome = client.cancel(parent.id, reason="done", wait=20)
    # NOT_STARTED when the start notice had not reached the store yet (ASSIGNED).
    assert outcome.cancelled and outcome.step in ("NOT_STARTED", "FLAG", "ASYNCIO", "KILL")
    assert outcome.cancelled_children == (tree.nodes[1].task.id,)
    assert outcome.task.cancel_step == outcome.step
    client.cancel(a.id)
