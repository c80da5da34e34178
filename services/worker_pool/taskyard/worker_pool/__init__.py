"""Worker pool: a manager (supervisor) and N worker processes x concurrency.

Application code uses ``task`` to register functions and ``is_worker_process``
to know it runs inside a worker; a task body reaches its attempt's
``TaskContext`` (logs, progress, context, cancel flag) with ``current_task()``.
A body throttled by a downstream raises ``RetryAfter(seconds)`` (or
``raise_for_throttle(status, headers)`` for an HTTP 429/503): retried after it,
spending no retry.
"""

from taskyard.core.retry import Retry
from taskyard.worker_pool.attempts import Cancelled  # a body stopping itself after ctx.cancelled
from taskyard.worker_pool.context import TaskContext
from taskyard.worker_pool.context import current as current_task
from taskyard.worker_pool.registry import TaskDef, is_worker_process, task
from taskyard.worker_pool.throttle import RetryAfter, raise_for_throttle, throttle_of

__all__ = [
    "Cancelled",
    "Retry",
    "RetryAfter",
    "TaskContext",
    "TaskDef",
    "current_task",
    "is_worker_process",
    "raise_for_throttle",
    "task",
    "throttle_of",
]
