from taskyard.v1 import limit_pb2 as _limit_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateLimitRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ...) -> None: ...

class CreateLimitResponse(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ...) -> None: ...

class GetLimitRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetLimitResponse(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ...) -> None: ...

class ListLimitsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLimitsResponse(_message.Message):
    __slots__ = ("limits", "next_page_token")
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    limits: _containers.RepeatedCompositeFieldContainer[_limit_pb2.Limit]
    next_page_token: str
    def __init__(self, limits: _Optional[_Iterable[_Union[_limit_pb2.Limit, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateLimitRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ...) -> None: ...

class UpdateLimitResponse(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: _limit_pb2.Limit
    def __init__(self, limit: _Optional[_Union[_limit_pb2.Limit, _Mapping]] = ...) -> None: ...

class DeleteLimitRequest(_message.Message):
    __slots__ = ("name", "force")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    force: bool
    def __init__(self, name: _Optional[str] = ..., force: bool = ...) -> None: ...

class DeleteLimitResponse(_message.Message):
    __slots__ = ("tasks_released",)
    TASKS_RELEASED_FIELD_NUMBER: _ClassVar[int]
    tasks_released: int
    def __init__(self, tasks_released: _Optional[int] = ...) -> None: ...

class SetKeyWeightRequest(_message.Message):
    __slots__ = ("weight",)
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    weight: _limit_pb2.KeyWeight
    def __init__(self, weight: _Optional[_Union[_limit_pb2.KeyWeight, _Mapping]] = ...) -> None: ...

class SetKeyWeightResponse(_message.Message):
    __slots__ = ("weight",)
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    weight: _limit_pb2.KeyWeight
    def __init__(self, weight: _Optional[_Union[_limit_pb2.KeyWeight, _Mapping]] = ...) -> None: ...

class ListKeyWeightsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListKeyWeightsResponse(_message.Message):
    __slots__ = ("weights",)
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    weights: _containers.RepeatedCompositeFieldContainer[_limit_pb2.KeyWeight]
    def __init__(self, weights: _Optional[_Iterable[_Union[_limit_pb2.KeyWeight, _Mapping]]] = ...) -> None: ...
