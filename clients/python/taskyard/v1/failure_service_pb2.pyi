import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RedriveState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REDRIVE_STATE_UNSPECIFIED: _ClassVar[RedriveState]
    REDRIVE_STATE_RUNNING: _ClassVar[RedriveState]
    REDRIVE_STATE_PAUSED: _ClassVar[RedriveState]
    REDRIVE_STATE_DONE: _ClassVar[RedriveState]
    REDRIVE_STATE_CANCELLED: _ClassVar[RedriveState]

class RedriveOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REDRIVE_OUTCOME_UNSPECIFIED: _ClassVar[RedriveOutcome]
    REDRIVE_OUTCOME_PENDING: _ClassVar[RedriveOutcome]
    REDRIVE_OUTCOME_REQUEUED: _ClassVar[RedriveOutcome]
    REDRIVE_OUTCOME_SKIPPED: _ClassVar[RedriveOutcome]
    REDRIVE_OUTCOME_CANCELLED: _ClassVar[RedriveOutcome]
REDRIVE_STATE_UNSPECIFIED: RedriveState
REDRIVE_STATE_RUNNING: RedriveState
REDRIVE_STATE_PAUSED: RedriveState
REDRIVE_STATE_DONE: RedriveState
REDRIVE_STATE_CANCELLED: RedriveState
REDRIVE_OUTCOME_UNSPECIFIED: RedriveOutcome
REDRIVE_OUTCOME_PENDING: RedriveOutcome
REDRIVE_OUTCOME_REQUEUED: RedriveOutcome
REDRIVE_OUTCOME_SKIPPED: RedriveOutcome
REDRIVE_OUTCOME_CANCELLED: RedriveOutcome

class FailureFilter(_message.Message):
    __slots__ = ("group_id", "queue", "name", "failed_after", "failed_before", "labels", "task_ids", "reason", "all")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FAILED_AFTER_FIELD_NUMBER: _ClassVar[int]
    FAILED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    group_id: str
    queue: str
    name: str
    failed_after: _timestamp_pb2.Timestamp
    failed_before: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    reason: _task_pb2.DeadLetterReason
    all: bool
    def __init__(self, group_id: _Optional[str] = ..., queue: _Optional[str] = ..., name: _Optional[str] = ..., failed_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., failed_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., task_ids: _Optional[_Iterable[str]] = ..., reason: _Optional[_Union[_task_pb2.DeadLetterReason, str]] = ..., all: bool = ...) -> None: ...

class FailureGroup(_message.Message):
    __slots__ = ("group_id", "queue", "name", "type", "message", "frame", "count", "first_seen", "last_seen", "sample_task_ids", "sample_traceback", "tenant")
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEEN_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    group_id: str
    queue: str
    name: str
    type: str
    message: str
    frame: str
    count: int
    first_seen: _timestamp_pb2.Timestamp
    last_seen: _timestamp_pb2.Timestamp
    sample_task_ids: _containers.RepeatedScalarFieldContainer[str]
    sample_traceback: str
    tenant: str
    def __init__(self, group_id: _Optional[str] = ..., queue: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., message: _Optional[str] = ..., frame: _Optional[str] = ..., count: _Optional[int] = ..., first_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sample_task_ids: _Optional[_Iterable[str]] = ..., sample_traceback: _Optional[str] = ..., tenant: _Optional[str] = ...) -> None: ...

class ListFailureGroupsRequest(_message.Message):
    __slots__ = ("filter", "page_size", "page_token")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    filter: FailureFilter
    page_size: int
    page_token: str
    def __init__(self, filter: _Optional[_Union[FailureFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFailureGroupsResponse(_message.Message):
    __slots__ = ("groups", "next_page_token")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[FailureGroup]
    next_page_token: str
    def __init__(self, groups: _Optional[_Iterable[_Union[FailureGroup, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("task_id", "queue", "name", "reason", "group_id", "failure", "labels", "redrives", "tenant")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    REDRIVES_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    queue: str
    name: str
    reason: _task_pb2.DeadLetterReason
    group_id: str
    failure: _task_pb2.TaskFailure
    labels: _containers.ScalarMap[str, str]
    redrives: int
    tenant: str
    def __init__(self, task_id: _Optional[str] = ..., queue: _Optional[str] = ..., name: _Optional[str] = ..., reason: _Optional[_Union[_task_pb2.DeadLetterReason, str]] = ..., group_id: _Optional[str] = ..., failure: _Optional[_Union[_task_pb2.TaskFailure, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., redrives: _Optional[int] = ..., tenant: _Optional[str] = ...) -> None: ...

class ListFailuresRequest(_message.Message):
    __slots__ = ("filter", "page_size", "page_token")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    filter: FailureFilter
    page_size: int
    page_token: str
    def __init__(self, filter: _Optional[_Union[FailureFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFailuresResponse(_message.Message):
    __slots__ = ("failures", "next_page_token")
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    failures: _containers.RepeatedCompositeFieldContainer[DeadLetter]
    next_page_token: str
    def __init__(self, failures: _Optional[_Iterable[_Union[DeadLetter, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Redrive(_message.Message):
    __slots__ = ("id", "filter", "rate", "state", "created_by", "created_at", "updated_at", "finished_at", "matched", "requeued", "skipped", "note", "tenant")
    ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    REQUEUED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    filter: FailureFilter
    rate: float
    state: RedriveState
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    matched: int
    requeued: int
    skipped: int
    note: str
    tenant: str
    def __init__(self, id: _Optional[str] = ..., filter: _Optional[_Union[FailureFilter, _Mapping]] = ..., rate: _Optional[float] = ..., state: _Optional[_Union[RedriveState, str]] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., matched: _Optional[int] = ..., requeued: _Optional[int] = ..., skipped: _Optional[int] = ..., note: _Optional[str] = ..., tenant: _Optional[str] = ...) -> None: ...

class RedriveItem(_message.Message):
    __slots__ = ("task_id", "outcome", "failed_attempt", "new_attempt", "at", "detail")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    FAILED_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NEW_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    outcome: RedriveOutcome
    failed_attempt: int
    new_attempt: int
    at: _timestamp_pb2.Timestamp
    detail: str
    def __init__(self, task_id: _Optional[str] = ..., outcome: _Optional[_Union[RedriveOutcome, str]] = ..., failed_attempt: _Optional[int] = ..., new_attempt: _Optional[int] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., detail: _Optional[str] = ...) -> None: ...

class RedriveRequest(_message.Message):
    __slots__ = ("filter", "rate", "dry_run", "note")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    filter: FailureFilter
    rate: float
    dry_run: bool
    note: str
    def __init__(self, filter: _Optional[_Union[FailureFilter, _Mapping]] = ..., rate: _Optional[float] = ..., dry_run: bool = ..., note: _Optional[str] = ...) -> None: ...

class RedriveResponse(_message.Message):
    __slots__ = ("redrive", "matched", "sample")
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    redrive: Redrive
    matched: int
    sample: _containers.RepeatedCompositeFieldContainer[DeadLetter]
    def __init__(self, redrive: _Optional[_Union[Redrive, _Mapping]] = ..., matched: _Optional[int] = ..., sample: _Optional[_Iterable[_Union[DeadLetter, _Mapping]]] = ...) -> None: ...

class GetRedriveRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetRedriveResponse(_message.Message):
    __slots__ = ("redrive",)
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    redrive: Redrive
    def __init__(self, redrive: _Optional[_Union[Redrive, _Mapping]] = ...) -> None: ...

class ListRedrivesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListRedrivesResponse(_message.Message):
    __slots__ = ("redrives", "next_page_token")
    REDRIVES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    redrives: _containers.RepeatedCompositeFieldContainer[Redrive]
    next_page_token: str
    def __init__(self, redrives: _Optional[_Iterable[_Union[Redrive, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListRedriveItemsRequest(_message.Message):
    __slots__ = ("id", "page_size", "page_token")
    ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    id: str
    page_size: int
    page_token: str
    def __init__(self, id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListRedriveItemsResponse(_message.Message):
    __slots__ = ("items", "next_page_token")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[RedriveItem]
    next_page_token: str
    def __init__(self, items: _Optional[_Iterable[_Union[RedriveItem, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PauseRedriveRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class PauseRedriveResponse(_message.Message):
    __slots__ = ("redrive",)
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    redrive: Redrive
    def __init__(self, redrive: _Optional[_Union[Redrive, _Mapping]] = ...) -> None: ...

class ResumeRedriveRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ResumeRedriveResponse(_message.Message):
    __slots__ = ("redrive",)
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    redrive: Redrive
    def __init__(self, redrive: _Optional[_Union[Redrive, _Mapping]] = ...) -> None: ...

class CancelRedriveRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class CancelRedriveResponse(_message.Message):
    __slots__ = ("redrive",)
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    redrive: Redrive
    def __init__(self, redrive: _Optional[_Union[Redrive, _Mapping]] = ...) -> None: ...

class PurgeDeadLettersRequest(_message.Message):
    __slots__ = ("filter", "dry_run")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    filter: FailureFilter
    dry_run: bool
    def __init__(self, filter: _Optional[_Union[FailureFilter, _Mapping]] = ..., dry_run: bool = ...) -> None: ...

class PurgeDeadLettersResponse(_message.Message):
    __slots__ = ("purged",)
    PURGED_FIELD_NUMBER: _ClassVar[int]
    purged: int
    def __init__(self, purged: _Optional[int] = ...) -> None: ...
