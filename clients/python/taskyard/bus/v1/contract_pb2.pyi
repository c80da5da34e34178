from google.protobuf import descriptor_pb2 as _descriptor_pb2
from taskyard.bus.v1 import envelope_pb2 as _envelope_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
KIND_FIELD_NUMBER: _ClassVar[int]
kind: _descriptor.FieldDescriptor
ENDPOINT_FIELD_NUMBER: _ClassVar[int]
endpoint: _descriptor.FieldDescriptor
STREAM_FIELD_NUMBER: _ClassVar[int]
stream: _descriptor.FieldDescriptor
LOCAL_FIELD_NUMBER: _ClassVar[int]
local: _descriptor.FieldDescriptor
RECORDS_IN_FIELD_1_FIELD_NUMBER: _ClassVar[int]
records_in_field_1: _descriptor.FieldDescriptor
