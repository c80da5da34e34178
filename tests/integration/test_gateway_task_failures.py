"""GetTask's failed attempts through a real gateway (fake store): the store's last ones
and the count of those before them, as the public Task carries them."""

from __future__ import annotations

import pytest
from integration.gateway_fakes import gateway_env

from taskyard.bus.v1 import tasks_pb2
from taskyard.core import contract
from taskyard.v1 import task_pb2, task_service_pb2

pytestmark = pytest.mark.asyncio


async def test_get_task_says_how_many_failed_attempts_came_before_those_it_lists() -> None:
    async with gateway_env() as gw:
        task_id = (
            await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
        ).task.id
        gw.backend.failures_reply = tasks_pb2.GetFailuresReply(
            tasks=[
                tasks_pb2.TaskFailures(
                    task_id=task_id,
                    failures=[task_pb2.TaskFailure(type="RetryAfter", attempt=a) for a in range(2901, 3001)],
                    earlier=2900,
                    refunded=3,
                )
            ]
        )
        task = (await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=10)).task
        assert [f.attempt for f in task.failures] == list(range(2901, 3001))
        assert task.earlier_failures == 2900
        asked = gw.backend.store_asked(contract.STORE_FAILURES)
        assert [(list(r.task_ids), r.counts_only) for r in asked] == [([task_id], False)]
