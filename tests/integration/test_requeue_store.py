"""Attempts a pool hands back reach the scheduler's lanes as refs, after COMMIT
(result_store/writes/requeues.py): real PostgreSQL, the store's real events PUB."""

from __future__ import annotations

import asyncio
from typing import Any

import pynng
import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import envelope_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, ids, transport

pytestmark = pytest.mark.asyncio


async def _messages(sock: pynng.Sub0, until: Any, within: float = 5.0) -> list[envelope_pb2.Envelope]:
    got: list[envelope_pb2.Envelope] = []

    async def receive() -> None:
        while not until(got):
            raw = await sock.arecv()
            got.append(transport.decode(raw[transport.EVENTS_TOPIC_BYTES :]))

    try:
        await asyncio.wait_for(receive(), within)
    except TimeoutError:
        raise AssertionError(f"not seen; got kinds {[e.kind for e in got]}") from None
    return got


async def test_released_and_unstarted_dead_attempts_are_published_as_refs(
    result_store: Any, store_settings: Any
) -> None:
    store = result_store
    sub = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20)
    sub.subscribe(transport.EVENTS_TOPIC)
    sub.dial(store_settings.events_address, block=False)
    try:
        records = [
            tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1, 2]", queue=q)
            for q in ("default", "mail", "default")
        ]
        reply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
        released, died, done = (t.id for t in reply.tasks)
        await store.lease(
            leases_pb2.LeaseTasksRequest(
                pool_id="pool-1",
                lease_ms=30_000,
                leases=[leases_pb2.Lease(task_id=t, lease_token=f"tok-{t}") for t in (released, died, done)],
            )
        )
        # The SUB connects first: a PUB drops what no one hears.
        await wait_until_async(lambda: sub.pipes, 5, "the SUB to connect")

        def ref(t: str) -> tr.AttemptRef:
            return tr.AttemptRef(task_id=t, attempt=1, lease_token=f"tok-{t}", worker_id="pool-1/w0:1")

        r = await store.report(
            leases_pb2.ReportRequest(
                released=[leases_pb2.Release(ref=ref(released))],
                died=[leases_pb2.Death(ref=ref(died), started=False)],
                completed=[leases_pb2.Completion(ref=ref(done), success=True, result_json=b"3")],
            )
        )
        assert list(r.released) == [released] and list(r.died) == [died] and r.refused == 0

        def batches(got: list[envelope_pb2.Envelope]) -> list[Any]:
            return [batch.events for e in got if (batch := contract.EVENTS.read(e)) is not None]

        def report_batch(got: list[envelope_pb2.Envelope]) -> list[Any]:
            # The report's committed group comes as two messages in a row: the rest
            # (the re-queued attempts, TASK_EVENTS_TOPIC) then its result (the success).
            bs = batches(got)
            for i, b in enumerate(bs):
                if any(ev.type == "task.succeeded" for ev in b):
                    rest = (
                        bs[i - 1]
                        if i > 0 and not any(transport.is_result_event(ev) for ev in bs[i - 1])
                        else []
                    )
                    return [[*rest, *b]]
            return []

        got = await _messages(
            sub,
            lambda es: any(contract.GRAPH_RELEASED.read(e) for e in es) and bool(report_batch(es)),
        )
        tasks = next(m for e in got if (m := contract.GRAPH_RELEASED.read(e)) is not None).tasks
        by_id = {t.id: t for t in tasks}
        assert set(by_id) == {released, died}  # not the completed one
        assert by_id[died].queue == "mail" and by_id[released].queue == "default"
        assert by_id[released].name == "add" and by_id[released].created_at_us > 0
        # Precise refs instead of a "reload everything" wake-up in the report's batch.
        (batch,) = report_batch(got)
        assert {ev.task_id for ev in batch if ev.type == "task.queued"} == {released, died}
        assert "tasks.available" not in [ev.type for ev in batch]
    finally:
        sub.close()
