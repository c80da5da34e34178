"""The Taskyard Python client: an ergonomic wrapper over the generated ``taskyard.v1`` stubs.

    from taskyard.client import Client

    with Client("localhost:50051") as client:
        task = client.submit("add", 2, 3)
        done = client.wait(task.id, timeout=30)
        print(done.state.name, done.result)

It depends only on grpcio, protobuf, googleapis-common-protos and the generated
``taskyard.v1`` code. Payloads are JSON: numbers travel as doubles, so an
integral result (``5.0``) comes back as ``5``. Task keyword arguments named like
``submit``'s own options (``priority``, ``queue``, ``timeout``…) go through
``submit_many([TaskRequest(name=..., kwargs={...})])``.

For the generated stubs on a channel secured like the client's (TLS, token)::

    channel = Endpoint("gw.example.com:50051", tls_ca="ca.pem", token=token).channel()
"""

from taskyard.client._async import AsyncClient
from taskyard.client._endpoint import DEFAULT_TARGET, Endpoint
from taskyard.client._errors import FieldViolation, TaskyardError
from taskyard.client._events import AsyncEventWatch, Event, EventWatch
from taskyard.client._failure_types import (
    DeadLetter,
    DeadLetterReason,
    FailureFilter,
    FailureGroup,
    Page,
    Redrive,
    RedriveItem,
    RedriveOutcome,
    RedriveStarted,
    RedriveState,
)
from taskyard.client._flow import (
    Breaker,
    FlowGate,
    KeyUsage,
    KeyWeight,
    LimitInfo,
    LimitPage,
    LimitUsage,
    LimitUse,
    Rate,
)
from taskyard.client._ops import LogLine, LogPage, QueueInfo, QueueStatus, ServerInfo, WorkerProcessInfo
from taskyard.client._schedules import ScheduleInfo, SchedulePage, Triggered
from taskyard.client._sync import Client
from taskyard.client._tenants import TenantInfo, TenantPage, TenantState
from taskyard.client._types import (
    Cancellation,
    Explanation,
    Priority,
    Submitted,
    TaskFailure,
    TaskInfo,
    TaskPage,
    TaskRequest,
    TaskState,
    TaskTree,
    TreeNode,
)

__all__ = [
    "DEFAULT_TARGET",
    "AsyncClient",
    "AsyncEventWatch",
    "Breaker",
    "Cancellation",
    "Client",
    "DeadLetter",
    "DeadLetterReason",
    "Endpoint",
    "Event",
    "EventWatch",
    "Explanation",
    "FailureFilter",
    "FailureGroup",
    "FieldViolation",
    "FlowGate",
    "KeyUsage",
    "KeyWeight",
    "LimitInfo",
    "LimitPage",
    "LimitUsage",
    "LimitUse",
    "LogLine",
    "LogPage",
    "Page",
    "Priority",
    "QueueInfo",
    "QueueStatus",
    "Rate",
    "Redrive",
    "RedriveItem",
    "RedriveOutcome",
    "RedriveStarted",
    "RedriveState",
    "ScheduleInfo",
    "SchedulePage",
    "ServerInfo",
    "Submitted",
    "TaskFailure",
    "TaskInfo",
    "TaskPage",
    "TaskRequest",
    "TaskState",
    "TaskTree",
    "TaskyardError",
    "TenantInfo",
    "TenantPage",
    "TenantState",
    "TreeNode",
    "Triggered",
    "WorkerProcessInfo",
]
