from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.v1 import queue_service_pb2 as _queue_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkerProcess(_message.Message):
    __slots__ = ("index", "pid", "state", "rss_bytes", "running_tasks", "last_beat_us")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    LAST_BEAT_US_FIELD_NUMBER: _ClassVar[int]
    index: int
    pid: int
    state: str
    rss_bytes: int
    running_tasks: int
    last_beat_us: int
    def __init__(self, index: _Optional[int] = ..., pid: _Optional[int] = ..., state: _Optional[str] = ..., rss_bytes: _Optional[int] = ..., running_tasks: _Optional[int] = ..., last_beat_us: _Optional[int] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("pool_id", "server_name", "max_workers", "active_workers", "idle_workers", "running_tasks", "is_running", "task_names", "state", "rss_bytes", "capacity", "concurrency", "processes", "last_dispatch_at_us")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKERS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    IDLE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    IS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    LAST_DISPATCH_AT_US_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    server_name: str
    max_workers: int
    active_workers: int
    idle_workers: int
    running_tasks: int
    is_running: bool
    task_names: _containers.RepeatedScalarFieldContainer[str]
    state: str
    rss_bytes: int
    capacity: int
    concurrency: int
    processes: _containers.RepeatedCompositeFieldContainer[WorkerProcess]
    last_dispatch_at_us: int
    def __init__(self, pool_id: _Optional[str] = ..., server_name: _Optional[str] = ..., max_workers: _Optional[int] = ..., active_workers: _Optional[int] = ..., idle_workers: _Optional[int] = ..., running_tasks: _Optional[int] = ..., is_running: bool = ..., task_names: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., rss_bytes: _Optional[int] = ..., capacity: _Optional[int] = ..., concurrency: _Optional[int] = ..., processes: _Optional[_Iterable[_Union[WorkerProcess, _Mapping]]] = ..., last_dispatch_at_us: _Optional[int] = ...) -> None: ...

class HeartbeatReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServersRequest(_message.Message):
    __slots__ = ("max_age_ms",)
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    max_age_ms: int
    def __init__(self, max_age_ms: _Optional[int] = ...) -> None: ...

class ServersReply(_message.Message):
    __slots__ = ("servers",)
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedCompositeFieldContainer[_queue_service_pb2.Server]
    def __init__(self, servers: _Optional[_Iterable[_Union[_queue_service_pb2.Server, _Mapping]]] = ...) -> None: ...

class TaskNamesRequest(_message.Message):
    __slots__ = ("max_age_ms",)
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    max_age_ms: int
    def __init__(self, max_age_ms: _Optional[int] = ...) -> None: ...

class TaskNamesReply(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class LosePoolsRequest(_message.Message):
    __slots__ = ("silent_ms", "limit", "requested_at_us", "valid_for_us")
    SILENT_MS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_US_FIELD_NUMBER: _ClassVar[int]
    VALID_FOR_US_FIELD_NUMBER: _ClassVar[int]
    silent_ms: int
    limit: int
    requested_at_us: int
    valid_for_us: int
    def __init__(self, silent_ms: _Optional[int] = ..., limit: _Optional[int] = ..., requested_at_us: _Optional[int] = ..., valid_for_us: _Optional[int] = ...) -> None: ...

class LosePoolsReply(_message.Message):
    __slots__ = ("pool_ids", "late")
    POOL_IDS_FIELD_NUMBER: _ClassVar[int]
    LATE_FIELD_NUMBER: _ClassVar[int]
    pool_ids: _containers.RepeatedScalarFieldContainer[str]
    late: bool
    def __init__(self, pool_ids: _Optional[_Iterable[str]] = ..., late: bool = ...) -> None: ...
