from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tasks_pb2 as _tasks_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import limit_pb2 as _limit_pb2
from taskyard.v1 import schedule_pb2 as _schedule_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScheduleAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_ACTION_UNSPECIFIED: _ClassVar[ScheduleAction]
    SCHEDULE_ACTION_PAUSE: _ClassVar[ScheduleAction]
    SCHEDULE_ACTION_RESUME: _ClassVar[ScheduleAction]
    SCHEDULE_ACTION_DELETE: _ClassVar[ScheduleAction]
SCHEDULE_ACTION_UNSPECIFIED: ScheduleAction
SCHEDULE_ACTION_PAUSE: ScheduleAction
SCHEDULE_ACTION_RESUME: ScheduleAction
SCHEDULE_ACTION_DELETE: ScheduleAction

class SaveSchedulesRequest(_message.Message):
    __slots__ = ("schedules", "declared", "now_us", "scope")
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    NOW_US_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[_schedule_pb2.Schedule]
    declared: bool
    now_us: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, schedules: _Optional[_Iterable[_Union[_schedule_pb2.Schedule, _Mapping]]] = ..., declared: bool = ..., now_us: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class SaveSchedulesReply(_message.Message):
    __slots__ = ("schedules",)
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[_schedule_pb2.Schedule]
    def __init__(self, schedules: _Optional[_Iterable[_Union[_schedule_pb2.Schedule, _Mapping]]] = ...) -> None: ...

class ReadSchedulesRequest(_message.Message):
    __slots__ = ("id", "page_size", "page_token", "scope")
    ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    id: str
    page_size: int
    page_token: str
    scope: _tenants_pb2.TenantScope
    def __init__(self, id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ReadSchedulesReply(_message.Message):
    __slots__ = ("schedules", "next_page_token")
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[_schedule_pb2.Schedule]
    next_page_token: str
    def __init__(self, schedules: _Optional[_Iterable[_Union[_schedule_pb2.Schedule, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ChangeScheduleRequest(_message.Message):
    __slots__ = ("id", "action", "now_us", "scope")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NOW_US_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    id: str
    action: ScheduleAction
    now_us: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, id: _Optional[str] = ..., action: _Optional[_Union[ScheduleAction, str]] = ..., now_us: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ChangeScheduleReply(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: _schedule_pb2.Schedule
    def __init__(self, schedule: _Optional[_Union[_schedule_pb2.Schedule, _Mapping]] = ...) -> None: ...

class FireSchedulesRequest(_message.Message):
    __slots__ = ("now_us", "limit", "trigger", "declared", "scope")
    NOW_US_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    now_us: int
    limit: int
    trigger: str
    declared: _containers.RepeatedCompositeFieldContainer[_limit_pb2.Limit]
    scope: _tenants_pb2.TenantScope
    def __init__(self, now_us: _Optional[int] = ..., limit: _Optional[int] = ..., trigger: _Optional[str] = ..., declared: _Optional[_Iterable[_Union[_limit_pb2.Limit, _Mapping]]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class FireSchedulesReply(_message.Message):
    __slots__ = ("tasks", "schedules", "skipped", "next_due_us", "more", "records", "now_us")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    NEXT_DUE_US_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NOW_US_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_tasks_pb2.InsertedTask]
    schedules: _containers.RepeatedCompositeFieldContainer[_schedule_pb2.Schedule]
    skipped: int
    next_due_us: int
    more: bool
    records: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    now_us: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[_tasks_pb2.InsertedTask, _Mapping]]] = ..., schedules: _Optional[_Iterable[_Union[_schedule_pb2.Schedule, _Mapping]]] = ..., skipped: _Optional[int] = ..., next_due_us: _Optional[int] = ..., more: bool = ..., records: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., now_us: _Optional[int] = ...) -> None: ...
