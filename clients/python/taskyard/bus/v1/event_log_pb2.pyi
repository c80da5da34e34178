from taskyard.v1 import event_service_pb2 as _event_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReadEventsRequest(_message.Message):
    __slots__ = ("after", "oldest", "limit")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    OLDEST_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    after: str
    oldest: bool
    limit: int
    def __init__(self, after: _Optional[str] = ..., oldest: bool = ..., limit: _Optional[int] = ...) -> None: ...

class ReadEventsReply(_message.Message):
    __slots__ = ("events", "cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_event_service_pb2.Event]
    cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[_event_service_pb2.Event, _Mapping]]] = ..., cursor: _Optional[str] = ...) -> None: ...
