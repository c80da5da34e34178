from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class LeadershipRequest(_message.Message):
    __slots__ = ("holder", "term", "ttl_ms", "release")
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    holder: str
    term: int
    ttl_ms: int
    release: bool
    def __init__(self, holder: _Optional[str] = ..., term: _Optional[int] = ..., ttl_ms: _Optional[int] = ..., release: bool = ...) -> None: ...

class LeadershipReply(_message.Message):
    __slots__ = ("term", "holder", "leader", "expires_in_ms")
    TERM_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_IN_MS_FIELD_NUMBER: _ClassVar[int]
    term: int
    holder: str
    leader: bool
    expires_in_ms: int
    def __init__(self, term: _Optional[int] = ..., holder: _Optional[str] = ..., leader: bool = ..., expires_in_ms: _Optional[int] = ...) -> None: ...
