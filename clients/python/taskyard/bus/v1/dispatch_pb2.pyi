from google.protobuf import empty_pb2 as _empty_pb2
from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import leases_pb2 as _leases_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tasks_pb2 as _tasks_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitRequest(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class SubmitReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_tasks_pb2.InsertedTask]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_tasks_pb2.InsertedTask, _Mapping]]] = ...) -> None: ...

class Register(_message.Message):
    __slots__ = ("pool_id", "server_name", "pair_address", "task_names", "capacity", "pid", "tenants")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    PAIR_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    server_name: str
    pair_address: str
    task_names: _containers.RepeatedScalarFieldContainer[str]
    capacity: int
    pid: int
    tenants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool_id: _Optional[str] = ..., server_name: _Optional[str] = ..., pair_address: _Optional[str] = ..., task_names: _Optional[_Iterable[str]] = ..., capacity: _Optional[int] = ..., pid: _Optional[int] = ..., tenants: _Optional[_Iterable[str]] = ...) -> None: ...

class RegisterReply(_message.Message):
    __slots__ = ("scheduler_id", "survey_address", "lease_ms")
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    SURVEY_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    scheduler_id: str
    survey_address: str
    lease_ms: int
    def __init__(self, scheduler_id: _Optional[str] = ..., survey_address: _Optional[str] = ..., lease_ms: _Optional[int] = ...) -> None: ...

class Dispatch(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class PoolReport(_message.Message):
    __slots__ = ("pool_id", "started", "completed", "released", "died", "free_slots", "state", "cut_off")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    DIED_FIELD_NUMBER: _ClassVar[int]
    FREE_SLOTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CUT_OFF_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    started: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.AttemptRef]
    completed: _containers.RepeatedCompositeFieldContainer[_leases_pb2.Completion]
    released: _containers.RepeatedCompositeFieldContainer[_leases_pb2.Release]
    died: _containers.RepeatedCompositeFieldContainer[_leases_pb2.Death]
    free_slots: int
    state: str
    cut_off: bool
    def __init__(self, pool_id: _Optional[str] = ..., started: _Optional[_Iterable[_Union[_task_record_pb2.AttemptRef, _Mapping]]] = ..., completed: _Optional[_Iterable[_Union[_leases_pb2.Completion, _Mapping]]] = ..., released: _Optional[_Iterable[_Union[_leases_pb2.Release, _Mapping]]] = ..., died: _Optional[_Iterable[_Union[_leases_pb2.Death, _Mapping]]] = ..., free_slots: _Optional[int] = ..., state: _Optional[str] = ..., cut_off: bool = ...) -> None: ...

class Survey(_message.Message):
    __slots__ = ("scheduler_id",)
    SCHEDULER_ID_FIELD_NUMBER: _ClassVar[int]
    scheduler_id: str
    def __init__(self, scheduler_id: _Optional[str] = ...) -> None: ...

class SurveyReply(_message.Message):
    __slots__ = ("pool_id", "running", "free_slots", "capacity", "task_names", "pair_address", "state", "worker_pids", "cut_off", "tenants")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    FREE_SLOTS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    PAIR_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    WORKER_PIDS_FIELD_NUMBER: _ClassVar[int]
    CUT_OFF_FIELD_NUMBER: _ClassVar[int]
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    running: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.AttemptRef]
    free_slots: int
    capacity: int
    task_names: _containers.RepeatedScalarFieldContainer[str]
    pair_address: str
    state: str
    worker_pids: _containers.RepeatedScalarFieldContainer[int]
    cut_off: bool
    tenants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool_id: _Optional[str] = ..., running: _Optional[_Iterable[_Union[_task_record_pb2.AttemptRef, _Mapping]]] = ..., free_slots: _Optional[int] = ..., capacity: _Optional[int] = ..., task_names: _Optional[_Iterable[str]] = ..., pair_address: _Optional[str] = ..., state: _Optional[str] = ..., worker_pids: _Optional[_Iterable[int]] = ..., cut_off: bool = ..., tenants: _Optional[_Iterable[str]] = ...) -> None: ...

class Announcement(_message.Message):
    __slots__ = ("service", "instance_id", "task_names", "pair_address", "capacity", "sent_at_ms", "tenants")
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    PAIR_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_MS_FIELD_NUMBER: _ClassVar[int]
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    service: str
    instance_id: str
    task_names: _containers.RepeatedScalarFieldContainer[str]
    pair_address: str
    capacity: int
    sent_at_ms: int
    tenants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, service: _Optional[str] = ..., instance_id: _Optional[str] = ..., task_names: _Optional[_Iterable[str]] = ..., pair_address: _Optional[str] = ..., capacity: _Optional[int] = ..., sent_at_ms: _Optional[int] = ..., tenants: _Optional[_Iterable[str]] = ...) -> None: ...
