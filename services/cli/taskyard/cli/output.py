"""What every command prints: ``--output table|json|yaml``.

- ``json``: the API's JSON mapping of the response message the gateway sent
  (proto field names, fields with default values included), indented; a
  stream (``task logs --follow``) prints one compact JSON object per message.
- ``yaml``: the same data as YAML (a stream: one document per message).
- ``table`` (the default): the command's view of the message, drawn with rich;
  durations as people write them (durations.py), times in UTC.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click
import yaml
from google.protobuf import json_format, struct_pb2, timestamp_pb2
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

M = TypeVar("M", bound=Message)
F = TypeVar("F", bound=Callable[..., Any])
View = Callable[[M], RenderableType]

FORMATS = ("table", "json", "yaml")
# Piped output is not cut to a terminal's width: rows stay whole for grep and awk.
PIPE_WIDTH = 4096
# Integral JSON numbers travel as doubles; below this they print as integers.
_MAX_SAFE_INTEGER = 2**53


@dataclasses.dataclass(frozen=True, kw_only=True)
class Output:
    format: str = "table"

    def emit(self, message: M, view: View[M]) -> None:
        """Print one response message."""
        text = self._text(message, view, streamed=False)
        if text:
            click.echo(text)

    def emit_each(self, messages: Iterable[M], view: View[M]) -> None:
        """Print the messages of a stream as each arrives."""
        for message in messages:
            text = self._text(message, view, streamed=True)
            if text:
                click.echo(text)
                sys.stdout.flush()

    def note(self, text: str) -> None:
        """A remark for people (a count, a hint) on stderr; programs reading json or yaml get none."""
        if self.format == "table":
            click.echo(text, err=True)

    def _text(self, message: M, view: View[M], *, streamed: bool) -> str:
        if self.format == "json":
            return json.dumps(api_mapping(message), indent=None if streamed else 2, ensure_ascii=False)
        if self.format == "yaml":
            data = api_mapping(message)
            return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, explicit_start=streamed).rstrip()
        return render(view(message))


def api_mapping(message: Message) -> dict[str, Any]:
    """The proto3 JSON mapping of ``message``, every field present (a script need not guess defaults).

    Payloads (``Struct``/``Value``/``ListValue``: args, kwargs, result, context)
    carry every number as a double; an integral one prints as the integer it
    was (``2``, not ``2.0``), as the JSON a client sent had it."""
    data: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    descriptor: Descriptor = message.DESCRIPTOR  # type: ignore[assignment]  # upb and python descriptors alike
    return _payload_numbers(descriptor, data)


_PAYLOAD_TYPES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})


def _payload_numbers(descriptor: Descriptor, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (the mapping of a message of ``descriptor``) with its payloads' integral numbers as ints."""
    for field in descriptor.fields:
        kind = field.message_type
        if kind is None or field.name not in data:
            continue
        value = data[field.name]
        if kind.GetOptions().map_entry:
            inner = kind.fields_by_name["value"].message_type
            if inner is not None and isinstance(value, dict):
                data[field.name] = {k: _message_numbers(inner, v) for k, v in value.items()}
        elif field.is_repeated and isinstance(value, list):
            data[field.name] = [_message_numbers(kind, v) for v in value]
        else:
            data[field.name] = _message_numbers(kind, value)
    return data


def _message_numbers(descriptor: Descriptor, value: Any) -> Any:
    if descriptor.full_name in _PAYLOAD_TYPES:
        return _integral(value)
    if isinstance(value, dict) and not descriptor.full_name.startswith("google.protobuf."):
        return _payload_numbers(descriptor, value)
    return value  # a well-known type printed as a string (Timestamp, Duration, ...)


def _chosen(_ctx: click.Context, _param: click.Parameter, value: str) -> Output:
    return Output(format=value.lower())


def output_option(func: F) -> F:
    """``--output/-o table|json|yaml`` as the command's ``output`` parameter (an ``Output``)."""
    return click.option(
        "--output",
        "-o",
        "output",
        type=click.Choice(FORMATS, case_sensitive=False),
        default="table",
        show_default=True,
        callback=_chosen,
        help="table for people; json (the API's JSON mapping of the response) or yaml for programs.",
    )(func)


# --- drawing tables ---------------------------------------------------------------


def render(renderable: RenderableType) -> str:
    """``renderable`` as text for stdout: colour only on a terminal, no trailing blanks."""
    tty = sys.stdout.isatty()
    console = Console(
        file=io.StringIO(),
        force_terminal=tty,
        color_system="auto" if tty else None,
        width=shutil.get_terminal_size().columns if tty else PIPE_WIDTH,
        markup=False,
        emoji=False,
        highlight=False,
    )
    with console.capture() as captured:
        console.print(renderable)
    return "\n".join(line.rstrip() for line in captured.get().splitlines()).strip("\n")


def fields(rows: Iterable[tuple[str, RenderableType]]) -> Table:
    """One thing, a field per line: ``key:  value``."""
    grid = Table(box=None, show_header=False, show_edge=False, padding=(0, 1), pad_edge=False)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(f"{key}:", value)
    return grid


def table(headers: Sequence[str], rows: Iterable[Sequence[RenderableType]]) -> Table:
    """Many things, one per row, under upper-case headers."""
    grid = Table(box=None, show_edge=False, padding=(0, 1), pad_edge=False, header_style="bold")
    for header in headers:
        grid.add_column(header.upper(), overflow="fold")
    for row in rows:
        grid.add_row(*row)
    return grid


def lines(texts: Iterable[str]) -> Text:
    return Text("\n".join(texts))


_STATE_STYLES = {"SUCCESS": "green", "FAILURE": "red", "CANCELLED": "yellow", "RUNNING": "cyan"}


def state(name: str) -> Text:
    return Text(name, style=_STATE_STYLES.get(name, ""))


def when(message: Message, field: str, *, timespec: str = "milliseconds") -> str:
    """A timestamp field in UTC, or "" when unset."""
    if not message.HasField(field):
        return ""
    stamp: timestamp_pb2.Timestamp = getattr(message, field)
    return stamp.ToDatetime(tzinfo=dt.UTC).isoformat(sep=" ", timespec=timespec)


def payload(value: struct_pb2.Value | struct_pb2.ListValue | struct_pb2.Struct) -> str:
    """A JSON payload as compact JSON, integral numbers as integers (``5``, not ``5.0``)."""
    return json.dumps(_integral(json_format.MessageToDict(value)), ensure_ascii=False)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value
