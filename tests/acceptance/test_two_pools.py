"""Two pools with different task modules behind one scheduler: each task goes only
to a pool that serves its name, and a name served by neither is refused."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from support import history

from taskyard.client import TaskyardError

pytestmark = pytest.mark.acceptance


def test_each_task_goes_only_to_a_pool_that_serves_it(cluster: Any) -> None:
    # Every row change is recorded from here on (for the history check).
    history.install(cluster.database_url)
    # The cluster's own pool serves taskyard.examples; pool-b serves only support.pool_b_tasks.
    cluster.start_service(
        "worker-pool",
        instance="worker-pool-b",
        env={"TASKYARD_POOL_ID": "pool-b", "TASKYARD_TASK_MODULES": "support.pool_b_tasks"},
    )
    client = cluster.client()
    cluster.wait_ready(probe_name="only_on_b")
    b_tasks = client.submit_many([{"name": "only_on_b", "args": [i]} for i in range(20)])
    a_tasks = client.submit_many([{"name": "add", "args": [i, 1]} for i in range(20)])
    for i, t in enumerate(b_tasks):
        done = client.wait(t.id, timeout=30)
        assert done.state.name == "SUCCESS" and done.result == i * 10
        assert done.worker_id.startswith("pool-b/"), done.worker_id
    for t in a_tasks:
        done = client.wait(t.id, timeout=30)
        assert done.state.name == "SUCCESS"
        assert not done.worker_id.startswith("pool-b/"), done.worker_id
    with pytest.raises(TaskyardError) as info:
        client.submit("served_by_nobody")
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert history.check(cluster, [t.id for t in b_tasks + a_tasks]), "no history was recorded"
