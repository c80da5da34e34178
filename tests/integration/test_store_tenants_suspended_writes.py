"""The store refuses a suspended (or unknown) tenant's writes that start new work
(a retry, a redrive, a new schedule), as it refuses its inserts: the gateway's
copy of the tenants may be a moment behind a suspension. A real store on its own
database (``result_store``, called in process)."""

from __future__ import annotations

from typing import Any

import pytest
from integration.test_dead_letters_store import fail
from integration.test_store_tenants import change, scope, tenant

from taskyard.bus.v1 import failures_pb2, queues_pb2, schedule_pb2, tenants_pb2
from taskyard.core import errors, tenants
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import schedule_pb2 as schedule_pub
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op
MISSING = "01890000-0000-7000-8000-000000000000"


async def refusal(call: Any) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


def retry(store: Any, who: str, tid: str) -> Any:
    return store.ops.queue_op(
        queues_pb2.QueueOpRequest(scope=scope(who), op=queues_pb2.QUEUE_OP_RETRY, ids=[tid])
    )


def redrive(store: Any, who: str, tid: str) -> Any:
    create = failures_pb2.CreateRedriveRequest(
        request=fs.RedriveRequest(filter=fs.FailureFilter(task_ids=[tid]), rate=10)
    )
    create.scope.CopyFrom(scope(who))
    return store.failures.create_redrive(create)


def new_schedule(store: Any, who: str) -> Any:
    s = schedule_pub.Schedule(name="nightly", cron="0 3 * * *", task=task_pb2.TaskSpec(name="add"))
    return store.schedules.save(schedule_pb2.SaveSchedulesRequest(schedules=[s], scope=scope(who), now_us=1))


async def test_a_suspended_tenants_retries_redrives_and_new_schedules_are_refused(result_store: Any) -> None:
    await change(result_store, Op.OP_CREATE, tenant("beta"))
    first, second = await fail(result_store, n=2, tenant="beta")
    await change(result_store, Op.OP_SUSPEND, tenant("beta"))
    for call in (
        lambda: retry(result_store, "beta", first),
        lambda: redrive(result_store, "beta", second),
        lambda: new_schedule(result_store, "beta"),
    ):
        err = await refusal(call())
        assert (err.code, err.reason, err.message) == (
            errors.Code.FAILED_PRECONDITION,
            tenants.TENANT_SUSPENDED,
            tenants.suspended_message("beta"),
        )
    # Nothing was changed: still dead letters, no redrive, no schedule.
    states = await result_store.pool.fetch("SELECT state::text FROM tasks WHERE tenant = 'beta'")
    assert [r["state"] for r in states] == ["FAILURE", "FAILURE"]
    assert await result_store.pool.fetchval("SELECT count(*) FROM redrives") == 0
    assert await result_store.pool.fetchval("SELECT count(*) FROM schedules") == 0
    # Resumed, each goes through.
    await change(result_store, Op.OP_RESUME, tenant("beta"))
    assert (await retry(result_store, "beta", first)).ids == [first]
    assert (await redrive(result_store, "beta", second)).response.redrive.id
    assert (await new_schedule(result_store, "beta")).schedules[0].name == "beta/nightly"


async def test_an_unknown_tenants_retries_redrives_and_new_schedules_are_refused(result_store: Any) -> None:
    for call in (
        lambda: retry(result_store, "ghost", MISSING),
        lambda: redrive(result_store, "ghost", MISSING),
        lambda: new_schedule(result_store, "ghost"),
    ):
        err = await refusal(call())
        assert (err.code, err.reason, err.message) == (
            errors.Code.FAILED_PRECONDITION,
            tenants.TENANT_UNKNOWN,
            tenants.unknown_message("ghost"),
        )
