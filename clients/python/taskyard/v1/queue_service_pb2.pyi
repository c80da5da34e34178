import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class QueueInfo(_message.Message):
    __slots__ = ("name", "paused", "pending", "queued", "scheduled", "assigned", "running", "retrying", "succeeded", "failed", "cancelled", "mean_duration", "failed_today", "tenant")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    RETRYING_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    MEAN_DURATION_FIELD_NUMBER: _ClassVar[int]
    FAILED_TODAY_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    name: str
    paused: bool
    pending: int
    queued: int
    scheduled: int
    assigned: int
    running: int
    retrying: int
    succeeded: int
    failed: int
    cancelled: int
    mean_duration: _duration_pb2.Duration
    failed_today: int
    tenant: str
    def __init__(self, name: _Optional[str] = ..., paused: bool = ..., pending: _Optional[int] = ..., queued: _Optional[int] = ..., scheduled: _Optional[int] = ..., assigned: _Optional[int] = ..., running: _Optional[int] = ..., retrying: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., cancelled: _Optional[int] = ..., mean_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., failed_today: _Optional[int] = ..., tenant: _Optional[str] = ...) -> None: ...

class PauseQueueRequest(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    def __init__(self, queue: _Optional[str] = ...) -> None: ...

class PauseQueueResponse(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: QueueInfo
    def __init__(self, queue: _Optional[_Union[QueueInfo, _Mapping]] = ...) -> None: ...

class ResumeQueueRequest(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    def __init__(self, queue: _Optional[str] = ...) -> None: ...

class ResumeQueueResponse(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: QueueInfo
    def __init__(self, queue: _Optional[_Union[QueueInfo, _Mapping]] = ...) -> None: ...

class ClearQueueRequest(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    def __init__(self, queue: _Optional[str] = ...) -> None: ...

class ClearQueueResponse(_message.Message):
    __slots__ = ("cleared",)
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    cleared: int
    def __init__(self, cleared: _Optional[int] = ...) -> None: ...

class RetryTasksRequest(_message.Message):
    __slots__ = ("queue", "name", "ids", "limit")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    name: str
    ids: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    def __init__(self, queue: _Optional[str] = ..., name: _Optional[str] = ..., ids: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ...) -> None: ...

class RetryTasksResponse(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetQueueStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetQueueStatusResponse(_message.Message):
    __slots__ = ("queues", "servers", "capacity", "running_tasks", "late_completions")
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    LATE_COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[QueueInfo]
    servers: int
    capacity: int
    running_tasks: int
    late_completions: int
    def __init__(self, queues: _Optional[_Iterable[_Union[QueueInfo, _Mapping]]] = ..., servers: _Optional[int] = ..., capacity: _Optional[int] = ..., running_tasks: _Optional[int] = ..., late_completions: _Optional[int] = ...) -> None: ...

class WorkerProcess(_message.Message):
    __slots__ = ("index", "pid", "state", "rss_bytes", "running_tasks", "last_beat")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    LAST_BEAT_FIELD_NUMBER: _ClassVar[int]
    index: int
    pid: int
    state: str
    rss_bytes: int
    running_tasks: int
    last_beat: _timestamp_pb2.Timestamp
    def __init__(self, index: _Optional[int] = ..., pid: _Optional[int] = ..., state: _Optional[str] = ..., rss_bytes: _Optional[int] = ..., running_tasks: _Optional[int] = ..., last_beat: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Server(_message.Message):
    __slots__ = ("pool_id", "server_name", "max_workers", "active_workers", "idle_workers", "running_tasks", "is_running", "last_heartbeat", "state", "task_names", "rss_bytes", "capacity", "last_dispatch_at", "workers", "concurrency")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKERS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    IDLE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    IS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LAST_DISPATCH_AT_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    server_name: str
    max_workers: int
    active_workers: int
    idle_workers: int
    running_tasks: int
    is_running: bool
    last_heartbeat: _timestamp_pb2.Timestamp
    state: str
    task_names: _containers.RepeatedScalarFieldContainer[str]
    rss_bytes: int
    capacity: int
    last_dispatch_at: _timestamp_pb2.Timestamp
    workers: _containers.RepeatedCompositeFieldContainer[WorkerProcess]
    concurrency: int
    def __init__(self, pool_id: _Optional[str] = ..., server_name: _Optional[str] = ..., max_workers: _Optional[int] = ..., active_workers: _Optional[int] = ..., idle_workers: _Optional[int] = ..., running_tasks: _Optional[int] = ..., is_running: bool = ..., last_heartbeat: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state: _Optional[str] = ..., task_names: _Optional[_Iterable[str]] = ..., rss_bytes: _Optional[int] = ..., capacity: _Optional[int] = ..., last_dispatch_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., workers: _Optional[_Iterable[_Union[WorkerProcess, _Mapping]]] = ..., concurrency: _Optional[int] = ...) -> None: ...

class ListServersRequest(_message.Message):
    __slots__ = ("max_age",)
    MAX_AGE_FIELD_NUMBER: _ClassVar[int]
    max_age: _duration_pb2.Duration
    def __init__(self, max_age: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ListServersResponse(_message.Message):
    __slots__ = ("servers",)
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedCompositeFieldContainer[Server]
    def __init__(self, servers: _Optional[_Iterable[_Union[Server, _Mapping]]] = ...) -> None: ...

class PurgeTasksRequest(_message.Message):
    __slots__ = ("older_than",)
    OLDER_THAN_FIELD_NUMBER: _ClassVar[int]
    older_than: _duration_pb2.Duration
    def __init__(self, older_than: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class PurgeTasksResponse(_message.Message):
    __slots__ = ("purged",)
    PURGED_FIELD_NUMBER: _ClassVar[int]
    purged: int
    def __init__(self, purged: _Optional[int] = ...) -> None: ...
