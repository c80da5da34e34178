"""add(2, 3) on a running suite: prints 5. TASKYARD_TARGET (default localhost:50051) and
TASKYARD_TOKEN (when the gateway asks for one) come from the environment."""

import os

from taskyard.client import Client

with Client(os.environ.get("TASKYARD_TARGET", "localhost:50051")) as client:
    task = client.submit("add", 2, 3)
    print(client.wait(task.id, timeout=30).result)
