"""GetTaskTree: a task's whole hierarchy from its root (the store's recursive query)."""

from __future__ import annotations

from taskyard.bus.v1 import graph_pb2
from taskyard.core import codec, contract, errors, rpc
from taskyard.v1 import task_service_pb2


async def task_tree(task_id: str, *, store: rpc.Caller) -> task_service_pb2.GetTaskTreeResponse:
    reply = await store.call(contract.STORE_TREE, graph_pb2.TaskTreeRequest(id=task_id))
    if not reply.found:
        raise errors.not_found("task", task_id)
    return task_service_pb2.GetTaskTreeResponse(
        root_id=reply.root_id,
        truncated=reply.truncated,
        nodes=[
            task_service_pb2.TaskTreeNode(task=codec.record_to_task(n.task), depth=n.depth, path=n.path)
            for n in reply.nodes
        ],
    )
