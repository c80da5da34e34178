"""Worker pool: a manager (supervisor) and N worker processes x concurrency.

Application code uses ``task`` to register functions and ``is_worker_process``
to know it runs inside a worker.
"""

from taskyard.worker_pool.registry import TaskDef, is_worker_process, task

__all__ = ["TaskDef", "is_worker_process", "task"]
