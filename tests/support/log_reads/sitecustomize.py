"""The log lines a gateway reads from its store, counted for the process that finds this
directory first on its PYTHONPATH: every page a log stream (or GetTaskLogs) reads is
appended as ``<task id> <from offset> <lines> <stream>`` to the file named by
TASKYARD_TEST_LOG_READS. What a gateway has read of a log and its readers have not is
all it can be holding for them, so a test bounds that, not the process's memory."""

from __future__ import annotations

import asyncio
import os
from typing import Any

_PATH = os.environ.get("TASKYARD_TEST_LOG_READS")

if _PATH:
    from taskyard.gateway import logs

    _read = logs.TaskLogs._read
    _out: str = _PATH

    async def _counted(self: Any, task_id: str, offset: int, limit: int) -> Any:
        reply = await _read(self, task_id, offset, limit)
        # One O_APPEND write per page: the test reads whole lines, never a torn one.
        fd = os.open(_out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            stream = id(asyncio.current_task())  # one asyncio task serves one stream
            os.write(fd, f"{task_id} {offset} {len(reply.logs)} {stream}\n".encode("ascii"))
        finally:
            os.close(fd)
        return reply

    logs.TaskLogs._read = _counted  # type: ignore[method-assign]
