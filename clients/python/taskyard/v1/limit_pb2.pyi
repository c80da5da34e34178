import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LimitUse(_message.Message):
    __slots__ = ("limit", "key", "units")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UNITS_FIELD_NUMBER: _ClassVar[int]
    limit: str
    key: str
    units: int
    def __init__(self, limit: _Optional[str] = ..., key: _Optional[str] = ..., units: _Optional[int] = ...) -> None: ...

class RateLimit(_message.Message):
    __slots__ = ("units", "period", "burst")
    UNITS_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    BURST_FIELD_NUMBER: _ClassVar[int]
    units: int
    period: _duration_pb2.Duration
    burst: int
    def __init__(self, units: _Optional[int] = ..., period: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., burst: _Optional[int] = ...) -> None: ...

class ConcurrencyLimit(_message.Message):
    __slots__ = ("max_units",)
    MAX_UNITS_FIELD_NUMBER: _ClassVar[int]
    max_units: int
    def __init__(self, max_units: _Optional[int] = ...) -> None: ...

class CircuitBreaker(_message.Message):
    __slots__ = ("failure_threshold", "window", "min_attempts", "cool_down", "half_open_probes", "max_refunds_per_task", "max_outage")
    FAILURE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    MIN_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    COOL_DOWN_FIELD_NUMBER: _ClassVar[int]
    HALF_OPEN_PROBES_FIELD_NUMBER: _ClassVar[int]
    MAX_REFUNDS_PER_TASK_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTAGE_FIELD_NUMBER: _ClassVar[int]
    failure_threshold: int
    window: _duration_pb2.Duration
    min_attempts: int
    cool_down: _duration_pb2.Duration
    half_open_probes: int
    max_refunds_per_task: int
    max_outage: _duration_pb2.Duration
    def __init__(self, failure_threshold: _Optional[int] = ..., window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., min_attempts: _Optional[int] = ..., cool_down: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., half_open_probes: _Optional[int] = ..., max_refunds_per_task: _Optional[int] = ..., max_outage: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Limit(_message.Message):
    __slots__ = ("name", "rate", "concurrency", "breaker", "per_key", "description", "task_name", "key_argument", "created_at", "updated_at", "usage", "tenant")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    PER_KEY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    KEY_ARGUMENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    name: str
    rate: RateLimit
    concurrency: ConcurrencyLimit
    breaker: CircuitBreaker
    per_key: bool
    description: str
    task_name: str
    key_argument: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    usage: LimitUsage
    tenant: str
    def __init__(self, name: _Optional[str] = ..., rate: _Optional[_Union[RateLimit, _Mapping]] = ..., concurrency: _Optional[_Union[ConcurrencyLimit, _Mapping]] = ..., breaker: _Optional[_Union[CircuitBreaker, _Mapping]] = ..., per_key: bool = ..., description: _Optional[str] = ..., task_name: _Optional[str] = ..., key_argument: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., usage: _Optional[_Union[LimitUsage, _Mapping]] = ..., tenant: _Optional[str] = ...) -> None: ...

class LimitUsage(_message.Message):
    __slots__ = ("units_in_use", "admitted", "throttled", "waiting", "keys", "busiest_keys")
    UNITS_IN_USE_FIELD_NUMBER: _ClassVar[int]
    ADMITTED_FIELD_NUMBER: _ClassVar[int]
    THROTTLED_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    BUSIEST_KEYS_FIELD_NUMBER: _ClassVar[int]
    units_in_use: int
    admitted: int
    throttled: int
    waiting: int
    keys: int
    busiest_keys: _containers.RepeatedCompositeFieldContainer[KeyUsage]
    def __init__(self, units_in_use: _Optional[int] = ..., admitted: _Optional[int] = ..., throttled: _Optional[int] = ..., waiting: _Optional[int] = ..., keys: _Optional[int] = ..., busiest_keys: _Optional[_Iterable[_Union[KeyUsage, _Mapping]]] = ...) -> None: ...

class KeyUsage(_message.Message):
    __slots__ = ("key", "units_in_use", "waiting")
    KEY_FIELD_NUMBER: _ClassVar[int]
    UNITS_IN_USE_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    key: str
    units_in_use: int
    waiting: int
    def __init__(self, key: _Optional[str] = ..., units_in_use: _Optional[int] = ..., waiting: _Optional[int] = ...) -> None: ...

class KeyWeight(_message.Message):
    __slots__ = ("key", "weight", "tenant")
    KEY_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    key: str
    weight: int
    tenant: str
    def __init__(self, key: _Optional[str] = ..., weight: _Optional[int] = ..., tenant: _Optional[str] = ...) -> None: ...

class FlowGate(_message.Message):
    __slots__ = ("limit", "key", "next_admission_at", "holder_ids", "position", "keys_ahead", "waited")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    NEXT_ADMISSION_AT_FIELD_NUMBER: _ClassVar[int]
    HOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    KEYS_AHEAD_FIELD_NUMBER: _ClassVar[int]
    WAITED_FIELD_NUMBER: _ClassVar[int]
    limit: str
    key: str
    next_admission_at: _timestamp_pb2.Timestamp
    holder_ids: _containers.RepeatedScalarFieldContainer[str]
    position: int
    keys_ahead: int
    waited: _duration_pb2.Duration
    def __init__(self, limit: _Optional[str] = ..., key: _Optional[str] = ..., next_admission_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., holder_ids: _Optional[_Iterable[str]] = ..., position: _Optional[int] = ..., keys_ahead: _Optional[int] = ..., waited: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...
