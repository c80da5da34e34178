from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.v1 import tenant_service_pb2 as _tenant_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TenantScope(_message.Message):
    __slots__ = ("all", "tenant")
    ALL_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    all: bool
    tenant: str
    def __init__(self, all: bool = ..., tenant: _Optional[str] = ...) -> None: ...

class ReadTenantsRequest(_message.Message):
    __slots__ = ("names", "after", "limit", "known_version")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    KNOWN_VERSION_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    after: str
    limit: int
    known_version: int
    def __init__(self, names: _Optional[_Iterable[str]] = ..., after: _Optional[str] = ..., limit: _Optional[int] = ..., known_version: _Optional[int] = ...) -> None: ...

class ReadTenantsReply(_message.Message):
    __slots__ = ("tenants", "version", "unchanged")
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    tenants: _containers.RepeatedCompositeFieldContainer[_tenant_service_pb2.Tenant]
    version: int
    unchanged: bool
    def __init__(self, tenants: _Optional[_Iterable[_Union[_tenant_service_pb2.Tenant, _Mapping]]] = ..., version: _Optional[int] = ..., unchanged: bool = ...) -> None: ...

class ChangeTenantRequest(_message.Message):
    __slots__ = ("op", "tenant", "reason", "caller")
    class Op(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OP_UNSPECIFIED: _ClassVar[ChangeTenantRequest.Op]
        OP_CREATE: _ClassVar[ChangeTenantRequest.Op]
        OP_UPDATE: _ClassVar[ChangeTenantRequest.Op]
        OP_SUSPEND: _ClassVar[ChangeTenantRequest.Op]
        OP_RESUME: _ClassVar[ChangeTenantRequest.Op]
    OP_UNSPECIFIED: ChangeTenantRequest.Op
    OP_CREATE: ChangeTenantRequest.Op
    OP_UPDATE: ChangeTenantRequest.Op
    OP_SUSPEND: ChangeTenantRequest.Op
    OP_RESUME: ChangeTenantRequest.Op
    OP_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    op: ChangeTenantRequest.Op
    tenant: _tenant_service_pb2.Tenant
    reason: str
    caller: str
    def __init__(self, op: _Optional[_Union[ChangeTenantRequest.Op, str]] = ..., tenant: _Optional[_Union[_tenant_service_pb2.Tenant, _Mapping]] = ..., reason: _Optional[str] = ..., caller: _Optional[str] = ...) -> None: ...

class ChangeTenantReply(_message.Message):
    __slots__ = ("tenant", "version")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    tenant: _tenant_service_pb2.Tenant
    version: int
    def __init__(self, tenant: _Optional[_Union[_tenant_service_pb2.Tenant, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...
