"""Many concurrent ``WaitTask`` calls from their own process, so the gateway under test
shares its event loop with none of them::

    python -m support.waiting_clients TARGET IDS_FILE --channels 4

One call per task id of IDS_FILE (one id a line).

Prints ``launched`` once every call is started, then waits for its stdin to close;
then prints one JSON line ``{"pending": n, "finished": {"CODE": n, ...}}`` (calls
that ended before stdin closed, by status code), cancels the rest and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys

import grpc
from google.protobuf import duration_pb2

from taskyard.v1 import task_service_pb2, task_service_pb2_grpc


async def main(target: str, ids: list[str], channels: int, wait_seconds: float) -> None:
    opened = [grpc.aio.insecure_channel(target) for _ in range(channels)]
    stubs = [task_service_pb2_grpc.TaskServiceStub(c) for c in opened]
    timeout = duration_pb2.Duration()
    timeout.FromNanoseconds(int(wait_seconds * 1e9))
    pending = [
        stubs[i % channels].WaitTask(
            task_service_pb2.WaitTaskRequest(id=task_id, timeout=timeout), timeout=wait_seconds + 30
        )
        for i, task_id in enumerate(ids)
    ]
    finished: collections.Counter[str] = collections.Counter()

    async def watch(call: grpc.aio.UnaryUnaryCall[object, object]) -> None:
        try:
            await call
            finished["OK"] += 1
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            finished[exc.code().name] += 1

    watchers = [asyncio.ensure_future(watch(c)) for c in pending]
    print("launched", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    print(
        json.dumps({"pending": sum(not w.done() for w in watchers), "finished": dict(finished)}), flush=True
    )
    for call in pending:
        call.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    for c in opened:
        await c.close(None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("ids_file")
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--wait-seconds", type=float, default=120.0)
    a = parser.parse_args()
    with open(a.ids_file, encoding="utf-8") as f:
        task_ids = f.read().split()
    asyncio.run(main(a.target, task_ids, a.channels, a.wait_seconds))
