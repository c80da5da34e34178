"""WatchEvents on a real cluster: a client that disconnects and resumes from its
last cursor gets every event exactly once, in order; a consumer too slow for the
gateway's ring is cut off with a cursor it can resume from; the Python client's
watch resumes by itself across a gateway restart."""

from __future__ import annotations

import json
import random
import signal
import threading
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from support.waiting import wait_until

from taskyard.v1 import event_service_pb2 as ev_pb
from taskyard.v1 import event_service_pb2_grpc, task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

TASKS = 10_000
FINAL = {task_pb2.TASK_STATE_SUCCESS, task_pb2.TASK_STATE_FAILURE, task_pb2.TASK_STATE_CANCELLED}


def submit(cluster: Any, n: int) -> list[str]:
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    ids: list[str] = []
    for start in range(0, n, 1000):
        specs = [task_pb2.TaskSpec(name="noop") for _ in range(min(1000, n - start))]
        # wait_for_ready: a gateway just restarted may find the process's shared
        # connection to it still backing off from its downtime.
        reply = stub.BatchSubmitTasks(
            task_service_pb2.BatchSubmitTasksRequest(tasks=specs), timeout=60, wait_for_ready=True
        )
        ids.extend(t.id for t in reply.tasks)
    return ids


class Collector:
    """Events of the task ids given, read by one client (resuming or not) in a thread."""

    def __init__(self, cluster: Any, *, resume_every: tuple[int, int] | None) -> None:
        self.stub = event_service_pb2_grpc.EventServiceStub(cluster.channel())
        self.resume_every = resume_every
        self.events: list[ev_pb.Event] = []
        self.cursor = ""
        self.until = ""  # stop once the stream's cursor reaches it
        self.finals: set[str] = set()
        self.streams = 0
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        rng = random.Random(7)
        try:
            while not self.stop.is_set():
                req = ev_pb.WatchEventsRequest(after=self.cursor, start=ev_pb.WATCH_START_OLDEST)
                call = self.stub.WatchEvents(req, timeout=120)
                self.streams += 1
                budget = rng.randint(*self.resume_every) if self.resume_every else -1
                for resp in call:
                    self.events.extend(resp.events)
                    self.finals.update(e.task_id for e in resp.events if e.state in FINAL)
                    self.cursor = resp.cursor
                    budget -= 1
                    if budget == 0 or self.stop.is_set() or (self.until and self.cursor >= self.until):
                        break
                call.cancel()
                if self.until and self.cursor >= self.until:
                    return
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.mark.cluster(workers=2, concurrency=32, event_ring_size=5000, event_page_size=500)
def test_a_resuming_client_gets_every_event_exactly_once_in_order(cluster: Any) -> None:
    whole = Collector(cluster, resume_every=None)
    resumed = Collector(cluster, resume_every=(2, 12))
    ids = submit(cluster, TASKS)
    wanted = set(ids)
    try:
        wait_until(
            lambda: wanted <= whole.finals or whole.error,
            timeout=90,
            what="the uninterrupted stream sees every task end",
        )
        assert whole.error is None, whole.error
        resumed.until = whole.cursor
        whole.stop.set()
        resumed.thread.join(timeout=60)
        assert resumed.error is None, resumed.error
    finally:
        whole.stop.set()
        resumed.stop.set()
    assert resumed.streams > 5  # it did disconnect, many times
    upto = whole.cursor
    a = [e for e in whole.events if e.cursor <= upto]
    b = [e for e in resumed.events if e.cursor <= upto]
    cursors = [e.cursor for e in b]
    assert cursors == sorted(set(cursors)), "cursors strictly increasing, no duplicates"
    assert [e.SerializeToString() for e in b] == [e.SerializeToString() for e in a]
    # Every task's events end in its final state (what the store says).
    last: dict[str, ev_pb.Event] = {}
    for e in b:
        if e.kind == ev_pb.EVENT_KIND_TASK:
            last[e.task_id] = e
    states = {
        r["id"]: r["state"] for r in cluster.query("SELECT id::text AS id, state::text AS state FROM tasks")
    }
    assert wanted <= set(last)
    for tid in wanted:
        assert task_pb2.TaskState.Name(last[tid].state) == f"TASK_STATE_{states[tid]}"
    types = {e.type for e in b if e.task_id in wanted}
    assert {"task.queued", "task.assigned", "task.succeeded"} <= types


def _error_info(err: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError("no ErrorInfo")


@pytest.mark.cluster(workers=1, concurrency=32, event_ring_size=500, event_page_size=100)
def test_a_slow_consumer_is_cut_off_with_a_cursor_to_resume_from(cluster: Any) -> None:
    # A reader that holds little: without BDP probing the connection's window stays
    # at its initial 64 KiB, so the gateway's sends block once the client stops reading.
    channel = grpc.insecure_channel(cluster.target, options=[("grpc.http2.bdp_probe", 0)])
    stub = event_service_pb2_grpc.EventServiceStub(channel)
    call = stub.WatchEvents(ev_pb.WatchEventsRequest(kinds=[ev_pb.EVENT_KIND_TASK]), timeout=60)
    first = next(call)  # where it begins; then it reads nothing while the suite works
    ids = submit(cluster, 5000)
    wait_until(
        lambda: cluster.count_tasks(states=["SUCCESS"]) >= len(ids), timeout=60, what="every task done"
    )
    got: list[ev_pb.Event] = []
    with pytest.raises(grpc.RpcError) as cut:
        for resp in call:
            got.extend(resp.events)
    assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = _error_info(cut.value)
    assert info.reason == "CONSUMER_TOO_SLOW"
    cursor = info.metadata["cursor"]
    assert cursor >= first.cursor and (not got or cursor >= got[-1].cursor)
    # Resumed from it: the rest, replayed from the store, nothing twice.
    rest = stub.WatchEvents(ev_pb.WatchEventsRequest(after=cursor, kinds=[ev_pb.EVENT_KIND_TASK]), timeout=60)
    finals: set[str] = {e.task_id for e in got if e.state == task_pb2.TASK_STATE_SUCCESS}
    for resp in rest:
        got.extend(resp.events)
        finals.update(e.task_id for e in resp.events if e.state == task_pb2.TASK_STATE_SUCCESS)
        if set(ids) <= finals:
            break
    rest.cancel()
    channel.close()
    cursors = [e.cursor for e in got]
    assert cursors == sorted(set(cursors))
    assert set(ids) <= finals


def test_the_grpcurl_example_of_the_docs_streams_events(cluster: Any) -> None:
    """docs/events.md: a stream from the oldest event, ended by grpcurl's -max-time."""
    from support import grpcurl

    (tid,) = submit(cluster, 1)
    wait_until(lambda: cluster.count_tasks(states=["SUCCESS"]) == 1, timeout=30, what="the task done")
    proc = grpcurl.run_raw(
        [
            "-plaintext",
            "-max-time",
            "2",
            "-d",
            json.dumps({"start": "WATCH_START_OLDEST", "kinds": ["EVENT_KIND_TASK"]}),
            cluster.target,
            "taskyard.v1.EventService/WatchEvents",
        ],
        check=False,
    )
    assert "DeadlineExceeded" in proc.stderr  # the stream stays open until the client ends it
    events = [e for doc in grpcurl.parse_stream(proc.stdout) for e in doc.get("events", [])]
    assert [e["type"] for e in events if e["task_id"] == tid][-1] == "task.succeeded"
    assert all(e["cursor"] for e in events)


@pytest.mark.cluster(workers=1, concurrency=32)
def test_the_clients_watch_resumes_across_a_gateway_restart_with_every_event_once(cluster: Any) -> None:
    """client.events.watch: the gateway stops (its streams end UNAVAILABLE with their
    cursor) and starts again; the watch resumes by itself. What it read is the
    events table's task events, in log order, each once."""
    client = cluster.client()
    watch = client.events.watch(kinds=["task"])
    seen: list[Any] = []
    failed: list[BaseException] = []
    ids: list[str] = []

    def read() -> None:
        try:
            for event in watch:
                seen.append(event)
        except BaseException as exc:  # reported by the test
            failed.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: watch.cursor, 10, "the watch to begin")
        ids += submit(cluster, 500)
        wait_until(lambda: len(seen) >= 100 or failed, 30, "the first events")
        cluster.kill("gateway", signal.SIGTERM)  # a graceful stop, as a rolling restart does
        cluster.start_service("gateway")
        ids += submit(cluster, 500)
        wanted = set(ids)

        def all_final() -> bool:
            done = {e.task_id for e in seen if e.state == "SUCCESS"}
            return wanted <= done or bool(failed)

        wait_until(all_final, 60, lambda: f"every task's end through the watch ({len(seen)} events)")
        assert not failed, failed
        assert watch.resumed >= 1
    finally:
        watch.close()
        client.close()
    rows = cluster.query(
        "SELECT task_id::text AS task_id, type FROM events WHERE kind = 1 AND task_id::text = ANY($1) "
        "ORDER BY xid, id",
        ids,
    )
    logged = [(r["task_id"], r["type"]) for r in rows]
    watched = [(e.task_id, e.type) for e in seen if e.task_id in wanted]
    assert watched == logged[: len(watched)] and len(watched) == len(logged)
    cursors = [e.cursor for e in seen]
    assert cursors == sorted(set(cursors))
