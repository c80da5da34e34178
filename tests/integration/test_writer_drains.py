"""The store's writer (real PostgreSQL): a lone write is one statement without
BEGIN and COMMIT when its kind allows it, and drains of different kinds are in
flight together while two drains of one kind never overlap."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.records import submitted_task

from taskyard.bus.v1 import event_pb2, tasks_pb2
from taskyard.core import contract
from taskyard.result_store.appliers import Applier, Db, Method, Outcome
from taskyard.result_store.committer import Committer

pytestmark = pytest.mark.asyncio


async def test_a_lone_insert_is_one_statement_outside_a_transaction(result_store: Any) -> None:
    stats = result_store.committer.stats
    # The first insert of a name reads the names declared (DeclaredNames): not a write.
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[submitted_task()]))
    statements, alone = stats.statements, stats.alone
    rec = submitted_task()
    (done,) = (await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))).tasks
    assert done.created
    assert (stats.statements - statements, stats.alone - alone) == (1, 1)
    # Its event was written by the same statement.
    logged = await result_store.pool.fetchval("SELECT count(*) FROM events WHERE task_id = $1", rec.id)
    assert logged == 1


async def test_an_insert_naming_a_parent_runs_in_a_transaction(result_store: Any) -> None:
    parent = submitted_task()
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[parent]))
    alone = result_store.committer.stats.alone
    child = submitted_task(parent_id=parent.id)
    (done,) = (await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[child]))).tasks
    assert done.created
    assert result_store.committer.stats.alone == alone


def method(kind: int) -> Method:
    return contract.Method(
        service="test",
        name=f"Write{kind}",
        kind=kind,
        request=tasks_pb2.InsertTasksRequest,
        reply=tasks_pb2.InsertTasksReply,
    )


SLOW, QUICK = method(1), method(2)


class Held:
    """An applier of the kind SLOW that waits until let go, noting each drain."""

    def __init__(self) -> None:
        self.drains: list[list[str]] = []
        self.entered = asyncio.Event()
        self.go = asyncio.Event()

    async def apply(self, db: Db, reqs: list[Any]) -> Outcome:
        self.drains.append([r.pool_id for r in reqs])
        self.entered.set()
        await self.go.wait()
        return Outcome(replies=[tasks_pb2.InsertTasksReply() for _ in reqs])


async def quick(db: Db, reqs: list[Any]) -> Outcome:
    return Outcome(replies=[tasks_pb2.InsertTasksReply() for _ in reqs])


async def test_drains_of_two_kinds_overlap_and_one_kind_keeps_its_order(result_store: Any) -> None:
    held = Held()

    async def publish(events: list[Any]) -> None:
        return None

    committer = Committer(
        result_store.pool,
        [(SLOW, held.apply), (QUICK, quick)],
        on_events=publish,
        on_finals=lambda finals: None,
        max_drains=2,
    )
    writer = asyncio.create_task(committer.run())
    try:

        def request(name: str) -> tasks_pb2.InsertTasksRequest:
            return tasks_pb2.InsertTasksRequest(pool_id=name)

        first = asyncio.create_task(committer.submit(SLOW, request("first")))
        await held.entered.wait()
        second = asyncio.create_task(committer.submit(SLOW, request("second")))
        # A drain of another kind commits while the first is still in flight.
        await committer.submit(QUICK, request("other"))
        assert not first.done() and not second.done()
        # The second of the held kind waits for the first to land.
        assert held.drains == [["first"]] and committer.waiting == 1
        held.go.set()
        await asyncio.gather(first, second)
        assert held.drains == [["first"], ["second"]]
    finally:
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)


def named(name: str) -> Applier:
    async def apply(db: Db, reqs: list[Any]) -> Outcome:
        return Outcome(
            replies=[tasks_pb2.InsertTasksReply() for _ in reqs], events=[event_pb2.Event(type=name)]
        )

    return apply


async def test_drains_in_flight_together_publish_in_the_order_they_committed(result_store: Any) -> None:
    published: list[str] = []
    first_publish = asyncio.Event()
    go = asyncio.Event()
    both = asyncio.Event()

    async def publish(events: list[event_pb2.Event]) -> None:
        if events[0].type == "first":
            first_publish.set()
            await go.wait()  # the first drain's publishing is slow
        published.extend(e.type for e in events)
        if len(published) == 2:
            both.set()

    first_kind, second_kind = method(3), method(4)
    committer = Committer(
        result_store.pool,
        [(first_kind, named("first")), (second_kind, named("second"))],
        on_events=publish,
        on_finals=lambda finals: None,
        max_drains=2,
    )
    writer = asyncio.create_task(committer.run())
    try:
        await committer.submit(first_kind, tasks_pb2.InsertTasksRequest())
        await first_publish.wait()
        # Committed and answered, but its events wait for the first drain's.
        await committer.submit(second_kind, tasks_pb2.InsertTasksRequest())
        assert published == []
        go.set()
        await both.wait()
        assert published == ["first", "second"]
    finally:
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
