from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KIND_UNSPECIFIED: _ClassVar[Kind]
    KIND_SUBMIT: _ClassVar[Kind]
    KIND_STORE_INSERT: _ClassVar[Kind]
    KIND_STORE_GET: _ClassVar[Kind]
    KIND_STORE_LIST: _ClassVar[Kind]
    KIND_STORE_LEASE: _ClassVar[Kind]
    KIND_STORE_REPORT: _ClassVar[Kind]
    KIND_STORE_RENEW: _ClassVar[Kind]
    KIND_STORE_RESCUE: _ClassVar[Kind]
    KIND_STORE_CANCEL: _ClassVar[Kind]
    KIND_STORE_LOAD_QUEUED: _ClassVar[Kind]
    KIND_STORE_PROMOTE_DUE: _ClassVar[Kind]
    KIND_STORE_HEARTBEAT: _ClassVar[Kind]
    KIND_STORE_TASK_NAMES: _ClassVar[Kind]
    KIND_REGISTER: _ClassVar[Kind]
    KIND_ANNOUNCE: _ClassVar[Kind]
    KIND_DISPATCH: _ClassVar[Kind]
    KIND_POOL_REPORT: _ClassVar[Kind]
    KIND_SURVEY: _ClassVar[Kind]
    KIND_EVENTS: _ClassVar[Kind]
    KIND_STORE_COUNTERS: _ClassVar[Kind]
    KIND_STORE_RECONCILE: _ClassVar[Kind]
    KIND_STORE_LOAD_DUE: _ClassVar[Kind]
    KIND_STORE_FAILURES: _ClassVar[Kind]
    KIND_STORE_EXPLAIN: _ClassVar[Kind]
    KIND_STORE_SCHEDULE_SAVE: _ClassVar[Kind]
    KIND_STORE_SCHEDULE_READ: _ClassVar[Kind]
    KIND_STORE_SCHEDULE_CHANGE: _ClassVar[Kind]
    KIND_STORE_SCHEDULE_FIRE: _ClassVar[Kind]
    KIND_SCHEDULE_TRIGGER: _ClassVar[Kind]
    KIND_GRAPH_RESOLVE: _ClassVar[Kind]
    KIND_GRAPH_RELEASED: _ClassVar[Kind]
    KIND_STORE_TREE: _ClassVar[Kind]
    KIND_STORE_LOGS: _ClassVar[Kind]
    KIND_STORE_GET_LOGS: _ClassVar[Kind]
    KIND_STORE_QUEUE_OP: _ClassVar[Kind]
    KIND_STORE_QUEUE_STATUS: _ClassVar[Kind]
    KIND_STORE_SERVERS: _ClassVar[Kind]
    KIND_STORE_READ_EVENTS: _ClassVar[Kind]
    KIND_STORE_SUMMARIZE_EVENTS: _ClassVar[Kind]
    KIND_STORE_LEADERSHIP: _ClassVar[Kind]
    KIND_STORE_LOSE_POOLS: _ClassVar[Kind]
    KIND_STORE_LIMITS: _ClassVar[Kind]
    KIND_STORE_LIMIT_CHANGE: _ClassVar[Kind]
    KIND_STORE_LEASED_FLOW: _ClassVar[Kind]
    KIND_FLOW_GATES: _ClassVar[Kind]
    KIND_STORE_FAILURE_GROUPS: _ClassVar[Kind]
    KIND_STORE_DEAD_LETTERS: _ClassVar[Kind]
    KIND_STORE_PURGE_DEAD_LETTERS: _ClassVar[Kind]
    KIND_STORE_REDRIVE_CREATE: _ClassVar[Kind]
    KIND_STORE_REDRIVE_CONTROL: _ClassVar[Kind]
    KIND_STORE_REDRIVE_LIST: _ClassVar[Kind]
    KIND_STORE_REDRIVE_STEP: _ClassVar[Kind]
    KIND_STORE_REDRIVES_ACTIVE: _ClassVar[Kind]
    KIND_STORE_BREAKER_EVENTS: _ClassVar[Kind]
    KIND_STORE_BREAKER_REFUNDS: _ClassVar[Kind]
    KIND_STORE_TENANTS: _ClassVar[Kind]
    KIND_STORE_TENANT_CHANGE: _ClassVar[Kind]
KIND_UNSPECIFIED: Kind
KIND_SUBMIT: Kind
KIND_STORE_INSERT: Kind
KIND_STORE_GET: Kind
KIND_STORE_LIST: Kind
KIND_STORE_LEASE: Kind
KIND_STORE_REPORT: Kind
KIND_STORE_RENEW: Kind
KIND_STORE_RESCUE: Kind
KIND_STORE_CANCEL: Kind
KIND_STORE_LOAD_QUEUED: Kind
KIND_STORE_PROMOTE_DUE: Kind
KIND_STORE_HEARTBEAT: Kind
KIND_STORE_TASK_NAMES: Kind
KIND_REGISTER: Kind
KIND_ANNOUNCE: Kind
KIND_DISPATCH: Kind
KIND_POOL_REPORT: Kind
KIND_SURVEY: Kind
KIND_EVENTS: Kind
KIND_STORE_COUNTERS: Kind
KIND_STORE_RECONCILE: Kind
KIND_STORE_LOAD_DUE: Kind
KIND_STORE_FAILURES: Kind
KIND_STORE_EXPLAIN: Kind
KIND_STORE_SCHEDULE_SAVE: Kind
KIND_STORE_SCHEDULE_READ: Kind
KIND_STORE_SCHEDULE_CHANGE: Kind
KIND_STORE_SCHEDULE_FIRE: Kind
KIND_SCHEDULE_TRIGGER: Kind
KIND_GRAPH_RESOLVE: Kind
KIND_GRAPH_RELEASED: Kind
KIND_STORE_TREE: Kind
KIND_STORE_LOGS: Kind
KIND_STORE_GET_LOGS: Kind
KIND_STORE_QUEUE_OP: Kind
KIND_STORE_QUEUE_STATUS: Kind
KIND_STORE_SERVERS: Kind
KIND_STORE_READ_EVENTS: Kind
KIND_STORE_SUMMARIZE_EVENTS: Kind
KIND_STORE_LEADERSHIP: Kind
KIND_STORE_LOSE_POOLS: Kind
KIND_STORE_LIMITS: Kind
KIND_STORE_LIMIT_CHANGE: Kind
KIND_STORE_LEASED_FLOW: Kind
KIND_FLOW_GATES: Kind
KIND_STORE_FAILURE_GROUPS: Kind
KIND_STORE_DEAD_LETTERS: Kind
KIND_STORE_PURGE_DEAD_LETTERS: Kind
KIND_STORE_REDRIVE_CREATE: Kind
KIND_STORE_REDRIVE_CONTROL: Kind
KIND_STORE_REDRIVE_LIST: Kind
KIND_STORE_REDRIVE_STEP: Kind
KIND_STORE_REDRIVES_ACTIVE: Kind
KIND_STORE_BREAKER_EVENTS: Kind
KIND_STORE_BREAKER_REFUNDS: Kind
KIND_STORE_TENANTS: Kind
KIND_STORE_TENANT_CHANGE: Kind

class Envelope(_message.Message):
    __slots__ = ("message_id", "kind", "headers", "deadline_unix_ms", "payload", "error", "budget_ms")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    kind: Kind
    headers: _containers.ScalarMap[str, str]
    deadline_unix_ms: int
    payload: bytes
    error: Error
    budget_ms: int
    def __init__(self, message_id: _Optional[str] = ..., kind: _Optional[_Union[Kind, str]] = ..., headers: _Optional[_Mapping[str, str]] = ..., deadline_unix_ms: _Optional[int] = ..., payload: _Optional[bytes] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., budget_ms: _Optional[int] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "message", "reason", "violations")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    violations: _containers.RepeatedCompositeFieldContainer[FieldViolation]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., violations: _Optional[_Iterable[_Union[FieldViolation, _Mapping]]] = ...) -> None: ...

class FieldViolation(_message.Message):
    __slots__ = ("field", "description")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    field: str
    description: str
    def __init__(self, field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...
