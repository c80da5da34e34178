"""QueueService end to end: pause/resume, clear, retry, status, servers, purge."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from support.waiting import wait_until

from taskyard.v1 import queue_service_pb2 as qs
from taskyard.v1 import queue_service_pb2_grpc, task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.timeout(90)


def stubs(cluster: Any) -> tuple[Any, Any]:
    ch = cluster.channel()
    return task_service_pb2_grpc.TaskServiceStub(ch), queue_service_pb2_grpc.QueueServiceStub(ch)


def spec(name: str, queue: str = "", *args: Any) -> task_pb2.TaskSpec:
    s = task_pb2.TaskSpec(name=name, queue=queue)
    s.args.extend(args)
    return s


def submit_many(tasks: Any, specs: list[task_pb2.TaskSpec]) -> list[str]:
    reply = tasks.BatchSubmitTasks(task_service_pb2.BatchSubmitTasksRequest(tasks=specs))
    return [r.id for r in reply.tasks]


def test_paused_queue_runs_nothing_until_resumed(cluster: Any) -> None:
    tasks, queues = stubs(cluster)
    paused = queues.PauseQueue(qs.PauseQueueRequest(queue="batch")).queue
    assert paused.name == "batch" and paused.paused
    ids = submit_many(tasks, [spec("noop", "batch") for _ in range(100)])
    # A task of another queue runs meanwhile: the scheduler is alive, not stuck.
    other = submit_many(tasks, [spec("add", "", 1, 2)])[0]
    done = tasks.WaitTask(
        task_service_pb2.WaitTaskRequest(id=other, timeout=duration_pb2.Duration(seconds=20))
    )
    assert done.task.state == task_pb2.TASK_STATE_SUCCESS
    # Once the other queue's task ran, the paused queue's 100 are still QUEUED.
    assert cluster.count_tasks(queue="batch", states=["QUEUED"]) == 100
    status = queues.GetQueueStatus(qs.GetQueueStatusRequest())
    batch = {q.name: q for q in status.queues}["batch"]
    assert batch.paused and batch.queued == 100
    resumed = queues.ResumeQueue(qs.ResumeQueueRequest(queue="batch")).queue
    assert not resumed.paused
    wait_until(
        lambda: cluster.count_tasks(queue="batch", states=["SUCCESS"]) == 100, 20, "the resumed queue to run"
    )
    assert len(ids) == 100


def test_pause_survives_a_scheduler_restart(cluster: Any) -> None:
    tasks, queues = stubs(cluster)
    queues.PauseQueue(qs.PauseQueueRequest(queue="slow"))
    cluster.kill("scheduler")
    cluster.start_service("scheduler")
    submit_many(tasks, [spec("noop", "slow") for _ in range(5)])
    ok = submit_many(tasks, [spec("noop")])[0]
    tasks.WaitTask(task_service_pb2.WaitTaskRequest(id=ok, timeout=duration_pb2.Duration(seconds=20)))
    assert cluster.count_tasks(queue="slow", states=["QUEUED"]) == 5
    queues.ResumeQueue(qs.ResumeQueueRequest(queue="slow"))
    wait_until(
        lambda: cluster.count_tasks(queue="slow", states=["SUCCESS"]) == 5, 20, "the resumed queue to run"
    )


def test_clear_cancels_the_waiting_tasks_of_a_queue(cluster: Any) -> None:
    tasks, queues = stubs(cluster)
    queues.PauseQueue(qs.PauseQueueRequest(queue="junk"))
    submit_many(tasks, [spec("noop", "junk") for _ in range(7)])
    assert queues.ClearQueue(qs.ClearQueueRequest(queue="junk")).cleared == 7
    assert cluster.count_tasks(queue="junk", states=["CANCELLED"]) == 7


@pytest.mark.cluster(development=False)
def test_clear_is_refused_outside_development(cluster: Any) -> None:
    _, queues = stubs(cluster)
    with pytest.raises(grpc.RpcError) as info:
        queues.ClearQueue(qs.ClearQueueRequest(queue="default"))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_retry_makes_failed_tasks_a_new_attempt(cluster: Any) -> None:
    tasks, queues = stubs(cluster)
    s = spec("fail", "retry-me")
    s.max_retries = 0
    (tid,) = submit_many(tasks, [s])
    failed = tasks.WaitTask(
        task_service_pb2.WaitTaskRequest(id=tid, timeout=duration_pb2.Duration(seconds=20))
    )
    assert failed.task.state == task_pb2.TASK_STATE_FAILURE and failed.task.attempt == 1
    assert {q.name: q for q in queues.GetQueueStatus(qs.GetQueueStatusRequest()).queues}[
        "retry-me"
    ].failed_today == 1
    retried = queues.RetryTasks(qs.RetryTasksRequest(queue="retry-me"))
    assert list(retried.ids) == [tid]
    wait_until(
        lambda: (
            tasks.GetTask(task_service_pb2.GetTaskRequest(id=tid)).task.attempt == 2
            and tasks.GetTask(task_service_pb2.GetTaskRequest(id=tid)).task.state
            == task_pb2.TASK_STATE_FAILURE
        ),
        20,
        "the retried task to fail again",
    )
    again = tasks.GetTask(task_service_pb2.GetTaskRequest(id=tid)).task
    assert [f.attempt for f in again.failures] == [1, 2]
    # Nothing failed in that queue any more? It did again; a filter that matches nothing retries nothing.
    assert list(queues.RetryTasks(qs.RetryTasksRequest(queue="retry-me", name="add")).ids) == []


def test_bad_queue_requests(cluster: Any) -> None:
    _, queues = stubs(cluster)
    for call, req in [
        (queues.RetryTasks, qs.RetryTasksRequest(ids=["nope"])),
        (queues.RetryTasks, qs.RetryTasksRequest(limit=10_001)),
        (queues.PauseQueue, qs.PauseQueueRequest(queue="x" * 201)),
        (queues.PurgeTasks, qs.PurgeTasksRequest(older_than=duration_pb2.Duration(seconds=-1))),
        (queues.ListServers, qs.ListServersRequest(max_age=duration_pb2.Duration(seconds=-5))),
    ]:
        with pytest.raises(grpc.RpcError) as info:
            call(req)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, req


def test_servers_and_status_show_the_pool(cluster: Any) -> None:
    _, queues = stubs(cluster)
    wait_until(
        lambda: len(queues.ListServers(qs.ListServersRequest()).servers) == 1, 20, "the pool's server row"
    )
    (server,) = queues.ListServers(qs.ListServersRequest()).servers
    assert server.server_name == "test-cluster" and server.is_running and server.capacity == 4
    assert "add" in server.task_names and server.HasField("last_heartbeat")
    status = queues.GetQueueStatus(qs.GetQueueStatusRequest())
    assert status.servers == 1 and status.capacity == 4


def test_purge_removes_only_old_final_tasks(cluster: Any) -> None:
    tasks, queues = stubs(cluster)
    ids = submit_many(tasks, [spec("add", "", 1, 1) for _ in range(3)])
    for tid in ids:
        tasks.WaitTask(task_service_pb2.WaitTaskRequest(id=tid, timeout=duration_pb2.Duration(seconds=20)))
    queues.PauseQueue(qs.PauseQueueRequest(queue="held"))
    (waiting,) = submit_many(tasks, [spec("noop", "held")])
    # Age two of the finished ones and the waiting one past the window.
    cluster.query(
        "UPDATE tasks SET finished_at = now() - interval '40 days', created_at = now() - interval '41 days' "
        "WHERE id = ANY($1::uuid[])",
        ids[:2],
    )
    cluster.query("UPDATE tasks SET created_at = now() - interval '41 days' WHERE id = $1::uuid", waiting)
    purged = queues.PurgeTasks(qs.PurgeTasksRequest())
    assert purged.purged == 2
    left = {r["id"] for r in cluster.query("SELECT id::text AS id FROM tasks")}
    assert ids[2] in left and waiting in left and not (set(ids[:2]) & left)
    with pytest.raises(grpc.RpcError) as info:
        tasks.GetTask(task_service_pb2.GetTaskRequest(id=ids[0]))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
