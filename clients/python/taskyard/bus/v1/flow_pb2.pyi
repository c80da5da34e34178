from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import limit_pb2 as _limit_pb2
from taskyard.v1 import task_service_pb2 as _task_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LimitOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIMIT_OP_UNSPECIFIED: _ClassVar[LimitOp]
    LIMIT_OP_CREATE: _ClassVar[LimitOp]
    LIMIT_OP_UPDATE: _ClassVar[LimitOp]
    LIMIT_OP_DELETE: _ClassVar[LimitOp]
    LIMIT_OP_DECLARE: _ClassVar[LimitOp]
    LIMIT_OP_SET_WEIGHT: _ClassVar[LimitOp]
LIMIT_OP_UNSPECIFIED: LimitOp
LIMIT_OP_CREATE: LimitOp
LIMIT_OP_UPDATE: LimitOp
LIMIT_OP_DELETE: LimitOp
LIMIT_OP_DECLARE: LimitOp
LIMIT_OP_SET_WEIGHT: LimitOp

class ReadLimitsRequest(_message.Message):
    __slots__ = ("known_version", "scope")
    KNOWN_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    known_version: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, known_version: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ReadLimitsReply(_message.Message):
    __slots__ = ("version", "unchanged", "limits", "weights")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    version: int
    unchanged: bool
    limits: _containers.RepeatedCompositeFieldContainer[_limit_pb2.Limit]
    weights: _containers.RepeatedCompositeFieldContainer[_limit_pb2.KeyWeight]
    def __init__(self, version: _Optional[int] = ..., unchanged: bool = ..., limits: _Optional[_Iterable[_Union[_limit_pb2.Limit, _Mapping]]] = ..., weights: _Optional[_Iterable[_Union[_limit_pb2.KeyWeight, _Mapping]]] = ...) -> None: ...

class ChangeLimitRequest(_message.Message):
    __slots__ = ("op", "limit", "name", "force", "declared", "weight", "scope")
    OP_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    op: LimitOp
    limit: _limit_pb2.Limit
    name: str
    force: bool
    declared: _containers.RepeatedCompositeFieldContainer[_limit_pb2.Limit]
    weight: _limit_pb2.KeyWeight
    scope: _tenants_pb2.TenantScope
    def __init__(self, op: _Optional[_Union[LimitOp, str]] = ..., limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ..., name: _Optional[str] = ..., force: bool = ..., declared: _Optional[_Iterable[_Union[_limit_pb2.Limit, _Mapping]]] = ..., weight: _Optional[_Union[_limit_pb2.KeyWeight, _Mapping]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ChangeLimitReply(_message.Message):
    __slots__ = ("limit", "tasks_released", "weight", "version")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TASKS_RELEASED_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    tasks_released: int
    weight: _limit_pb2.KeyWeight
    version: int
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ..., tasks_released: _Optional[int] = ..., weight: _Optional[_Union[_limit_pb2.KeyWeight, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class LeasedFlowRequest(_message.Message):
    __slots__ = ("limit", "after_id", "tenants")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AFTER_ID_FIELD_NUMBER: _ClassVar[int]
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    limit: int
    after_id: str
    tenants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, limit: _Optional[int] = ..., after_id: _Optional[str] = ..., tenants: _Optional[_Iterable[str]] = ...) -> None: ...

class LeasedFlow(_message.Message):
    __slots__ = ("task_id", "attempt", "lease_token", "flow", "tenant")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    lease_token: str
    flow: _task_record_pb2.FlowControl
    tenant: str
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., lease_token: _Optional[str] = ..., flow: _Optional[_Union[_task_record_pb2.FlowControl, _Mapping]] = ..., tenant: _Optional[str] = ...) -> None: ...

class LeasedFlowReply(_message.Message):
    __slots__ = ("attempts", "next_after_id")
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_AFTER_ID_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[LeasedFlow]
    next_after_id: str
    def __init__(self, attempts: _Optional[_Iterable[_Union[LeasedFlow, _Mapping]]] = ..., next_after_id: _Optional[str] = ...) -> None: ...

class FlowGatesRequest(_message.Message):
    __slots__ = ("task_ids", "limits", "scope")
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    limits: _containers.RepeatedScalarFieldContainer[str]
    scope: _tenants_pb2.TenantScope
    def __init__(self, task_ids: _Optional[_Iterable[str]] = ..., limits: _Optional[_Iterable[str]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class TaskGate(_message.Message):
    __slots__ = ("task_id", "reason", "gate")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    GATE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    reason: _task_service_pb2.WaitReason
    gate: _limit_pb2.FlowGate
    def __init__(self, task_id: _Optional[str] = ..., reason: _Optional[_Union[_task_service_pb2.WaitReason, str]] = ..., gate: _Optional[_Union[_limit_pb2.FlowGate, _Mapping]] = ...) -> None: ...

class FlowGatesReply(_message.Message):
    __slots__ = ("gates", "usage", "term")
    class UsageEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _limit_pb2.LimitUsage
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_limit_pb2.LimitUsage, _Mapping]] = ...) -> None: ...
    GATES_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    gates: _containers.RepeatedCompositeFieldContainer[TaskGate]
    usage: _containers.MessageMap[str, _limit_pb2.LimitUsage]
    term: int
    def __init__(self, gates: _Optional[_Iterable[_Union[TaskGate, _Mapping]]] = ..., usage: _Optional[_Mapping[str, _limit_pb2.LimitUsage]] = ..., term: _Optional[int] = ...) -> None: ...

class BreakerChange(_message.Message):
    __slots__ = ("limit", "key", "change", "failures", "next_probe_at_us")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PROBE_AT_US_FIELD_NUMBER: _ClassVar[int]
    limit: str
    key: str
    change: str
    failures: int
    next_probe_at_us: int
    def __init__(self, limit: _Optional[str] = ..., key: _Optional[str] = ..., change: _Optional[str] = ..., failures: _Optional[int] = ..., next_probe_at_us: _Optional[int] = ...) -> None: ...

class BreakerEventsRequest(_message.Message):
    __slots__ = ("changes", "term")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[BreakerChange]
    term: int
    def __init__(self, changes: _Optional[_Iterable[_Union[BreakerChange, _Mapping]]] = ..., term: _Optional[int] = ...) -> None: ...

class BreakerEventsReply(_message.Message):
    __slots__ = ("logged",)
    LOGGED_FIELD_NUMBER: _ClassVar[int]
    logged: int
    def __init__(self, logged: _Optional[int] = ...) -> None: ...

class BreakerRefund(_message.Message):
    __slots__ = ("task_id", "attempt", "next_probe_at_us")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NEXT_PROBE_AT_US_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    next_probe_at_us: int
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., next_probe_at_us: _Optional[int] = ...) -> None: ...

class BreakerRefundsRequest(_message.Message):
    __slots__ = ("term", "refunds")
    TERM_FIELD_NUMBER: _ClassVar[int]
    REFUNDS_FIELD_NUMBER: _ClassVar[int]
    term: int
    refunds: _containers.RepeatedCompositeFieldContainer[BreakerRefund]
    def __init__(self, term: _Optional[int] = ..., refunds: _Optional[_Iterable[_Union[BreakerRefund, _Mapping]]] = ...) -> None: ...

class BreakerRefundsReply(_message.Message):
    __slots__ = ("refunded", "revived", "pending")
    REFUNDED_FIELD_NUMBER: _ClassVar[int]
    REVIVED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    refunded: int
    revived: int
    pending: _containers.RepeatedCompositeFieldContainer[BreakerRefund]
    def __init__(self, refunded: _Optional[int] = ..., revived: _Optional[int] = ..., pending: _Optional[_Iterable[_Union[BreakerRefund, _Mapping]]] = ...) -> None: ...
