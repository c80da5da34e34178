from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import failure_service_pb2 as _failure_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RedriveOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REDRIVE_OP_UNSPECIFIED: _ClassVar[RedriveOp]
    REDRIVE_OP_GET: _ClassVar[RedriveOp]
    REDRIVE_OP_PAUSE: _ClassVar[RedriveOp]
    REDRIVE_OP_RESUME: _ClassVar[RedriveOp]
    REDRIVE_OP_CANCEL: _ClassVar[RedriveOp]
REDRIVE_OP_UNSPECIFIED: RedriveOp
REDRIVE_OP_GET: RedriveOp
REDRIVE_OP_PAUSE: RedriveOp
REDRIVE_OP_RESUME: RedriveOp
REDRIVE_OP_CANCEL: RedriveOp

class FailureGroupsRequest(_message.Message):
    __slots__ = ("request", "scope")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    request: _failure_service_pb2.ListFailureGroupsRequest
    scope: _tenants_pb2.TenantScope
    def __init__(self, request: _Optional[_Union[_failure_service_pb2.ListFailureGroupsRequest, _Mapping]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class FailureGroupsReply(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: _failure_service_pb2.ListFailureGroupsResponse
    def __init__(self, response: _Optional[_Union[_failure_service_pb2.ListFailureGroupsResponse, _Mapping]] = ...) -> None: ...

class DeadLettersRequest(_message.Message):
    __slots__ = ("request", "scope")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    request: _failure_service_pb2.ListFailuresRequest
    scope: _tenants_pb2.TenantScope
    def __init__(self, request: _Optional[_Union[_failure_service_pb2.ListFailuresRequest, _Mapping]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class DeadLettersReply(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: _failure_service_pb2.ListFailuresResponse
    def __init__(self, response: _Optional[_Union[_failure_service_pb2.ListFailuresResponse, _Mapping]] = ...) -> None: ...

class PurgeDeadLettersRequest(_message.Message):
    __slots__ = ("request", "scope")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    request: _failure_service_pb2.PurgeDeadLettersRequest
    scope: _tenants_pb2.TenantScope
    def __init__(self, request: _Optional[_Union[_failure_service_pb2.PurgeDeadLettersRequest, _Mapping]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class PurgeDeadLettersReply(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: _failure_service_pb2.PurgeDeadLettersResponse
    def __init__(self, response: _Optional[_Union[_failure_service_pb2.PurgeDeadLettersResponse, _Mapping]] = ...) -> None: ...

class CreateRedriveRequest(_message.Message):
    __slots__ = ("request", "created_by", "scope")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    request: _failure_service_pb2.RedriveRequest
    created_by: str
    scope: _tenants_pb2.TenantScope
    def __init__(self, request: _Optional[_Union[_failure_service_pb2.RedriveRequest, _Mapping]] = ..., created_by: _Optional[str] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class CreateRedriveReply(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: _failure_service_pb2.RedriveResponse
    def __init__(self, response: _Optional[_Union[_failure_service_pb2.RedriveResponse, _Mapping]] = ...) -> None: ...

class RedriveControlRequest(_message.Message):
    __slots__ = ("op", "id", "scope")
    OP_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    op: RedriveOp
    id: str
    scope: _tenants_pb2.TenantScope
    def __init__(self, op: _Optional[_Union[RedriveOp, str]] = ..., id: _Optional[str] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class RedriveControlReply(_message.Message):
    __slots__ = ("redrive",)
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    redrive: _failure_service_pb2.Redrive
    def __init__(self, redrive: _Optional[_Union[_failure_service_pb2.Redrive, _Mapping]] = ...) -> None: ...

class RedriveListRequest(_message.Message):
    __slots__ = ("redrives", "items", "scope")
    REDRIVES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    redrives: _failure_service_pb2.ListRedrivesRequest
    items: _failure_service_pb2.ListRedriveItemsRequest
    scope: _tenants_pb2.TenantScope
    def __init__(self, redrives: _Optional[_Union[_failure_service_pb2.ListRedrivesRequest, _Mapping]] = ..., items: _Optional[_Union[_failure_service_pb2.ListRedriveItemsRequest, _Mapping]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class RedriveListReply(_message.Message):
    __slots__ = ("redrives", "items")
    REDRIVES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    redrives: _failure_service_pb2.ListRedrivesResponse
    items: _failure_service_pb2.ListRedriveItemsResponse
    def __init__(self, redrives: _Optional[_Union[_failure_service_pb2.ListRedrivesResponse, _Mapping]] = ..., items: _Optional[_Union[_failure_service_pb2.ListRedriveItemsResponse, _Mapping]] = ...) -> None: ...

class RedriveStepRequest(_message.Message):
    __slots__ = ("id", "limit", "term")
    ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    id: str
    limit: int
    term: int
    def __init__(self, id: _Optional[str] = ..., limit: _Optional[int] = ..., term: _Optional[int] = ...) -> None: ...

class RedriveStepReply(_message.Message):
    __slots__ = ("redrive", "requeued", "skipped")
    REDRIVE_FIELD_NUMBER: _ClassVar[int]
    REQUEUED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    redrive: _failure_service_pb2.Redrive
    requeued: int
    skipped: int
    def __init__(self, redrive: _Optional[_Union[_failure_service_pb2.Redrive, _Mapping]] = ..., requeued: _Optional[int] = ..., skipped: _Optional[int] = ...) -> None: ...

class ActiveRedrivesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ActiveRedrivesReply(_message.Message):
    __slots__ = ("redrives",)
    REDRIVES_FIELD_NUMBER: _ClassVar[int]
    redrives: _containers.RepeatedCompositeFieldContainer[_failure_service_pb2.Redrive]
    def __init__(self, redrives: _Optional[_Iterable[_Union[_failure_service_pb2.Redrive, _Mapping]]] = ...) -> None: ...
