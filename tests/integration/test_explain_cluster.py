"""ExplainTask over gRPC and ``taskyard task explain`` on a real cluster."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from support.waiting import wait_until

from taskyard.cli.main import cli
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

R = task_service_pb2


def test_explain_over_grpc_and_the_cli(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="noop")
    spec.countdown.FromSeconds(600)
    later = stub.SubmitTask(R.SubmitTaskRequest(task=spec), timeout=10).task

    out = stub.ExplainTask(R.ExplainTaskRequest(id=later.id), timeout=10)
    assert out.reason == R.WAIT_REASON_ETA
    assert out.message.startswith("waiting for its ETA (in 10 min")
    assert out.until == later.run_at

    done = cluster.client().submit("add", 1, 2)
    assert cluster.client().wait(done.id, timeout=10).state.name == "SUCCESS"
    out = stub.ExplainTask(R.ExplainTaskRequest(id=done.id), timeout=10)
    assert (out.reason, out.message) == (R.WAIT_REASON_FINAL, "it succeeded at attempt 1")

    with pytest.raises(grpc.RpcError) as info:
        stub.ExplainTask(R.ExplainTaskRequest(id="0190f0c2-0000-7000-8000-000000000999"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        stub.ExplainTask(R.ExplainTaskRequest(id="nope"), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    runner = CliRunner()
    result = runner.invoke(cli, ["task", "explain", later.id, "--target", cluster.target])
    assert result.exit_code == 0, result.output
    assert "reason" in result.output and "ETA" in result.output and "until" in result.output
    result = runner.invoke(cli, ["task", "explain", later.id, "--output", "json", "--target", cluster.target])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["reason"] == "WAIT_REASON_ETA"
    result = runner.invoke(cli, ["task", "explain", "nope", "--target", cluster.target])
    assert result.exit_code == 1


@pytest.mark.cluster(concurrency=1, worker_heartbeat_interval=0.2)
def test_queued_behind_a_busy_pool(cluster: Any) -> None:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    client = cluster.client()
    busy = client.submit("sleep", 5.0)
    waiting = [client.submit("noop") for _ in range(3)]

    def explained() -> Any:
        out = stub.ExplainTask(R.ExplainTaskRequest(id=waiting[-1].id), timeout=10)
        return out if out.reason == R.WAIT_REASON_SLOTS_BUSY else None

    out = wait_until(explained, 10, "ExplainTask to say the pool's slots are busy", interval=0.1)
    assert out.lane_depth_ahead == 2
    assert "busy; 2 tasks ahead of it" in out.message
    client.cancel(busy.id)
