from taskyard.bus.v1 import store_pb2 as _store_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReconcileRequest(_message.Message):
    __slots__ = ("pool_ids", "held_tokens", "issued_before_ms_ago", "limit", "own_token_prefix")
    POOL_IDS_FIELD_NUMBER: _ClassVar[int]
    HELD_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ISSUED_BEFORE_MS_AGO_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OWN_TOKEN_PREFIX_FIELD_NUMBER: _ClassVar[int]
    pool_ids: _containers.RepeatedScalarFieldContainer[str]
    held_tokens: _containers.RepeatedScalarFieldContainer[str]
    issued_before_ms_ago: int
    limit: int
    own_token_prefix: str
    def __init__(self, pool_ids: _Optional[_Iterable[str]] = ..., held_tokens: _Optional[_Iterable[str]] = ..., issued_before_ms_ago: _Optional[int] = ..., limit: _Optional[int] = ..., own_token_prefix: _Optional[str] = ...) -> None: ...

class ReconcileReply(_message.Message):
    __slots__ = ("released",)
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: _containers.RepeatedCompositeFieldContainer[_store_pb2.QueuedRef]
    def __init__(self, released: _Optional[_Iterable[_Union[_store_pb2.QueuedRef, _Mapping]]] = ...) -> None: ...
