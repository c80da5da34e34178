#!/usr/bin/env python3
"""Write the bus contract module (taskyard.bus.v1.contract) from the compiled protos.

    tools/gen_contract.py DESCRIPTOR_SET OUT_PY

DESCRIPTOR_SET is a FileDescriptorSet of every proto, imports included (protoc
--descriptor_set_out --include_imports, as tools/gen.sh makes it). The options of
taskyard/bus/v1/contract.proto on the bus's services say what each envelope kind
carries; this turns them into typed ``Method`` and ``Stream`` objects, so that
core.contract takes them from the protos instead of a hand-kept table.

The contract is checked here, before anything is written: every Kind is declared
by exactly one method, every method of a bus service has a kind, and a message
that keeps its records in field 1 does. The output is formatted by ruff (the
project's pinned version), so the same protos always give the same bytes and
`make gen-check` catches a module that disagrees with them.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "taskyard.bus.v1"
ENVELOPE = "taskyard/bus/v1/envelope.proto"
KIND_ENUM = f"{PACKAGE}.Kind"
EMPTY = "google.protobuf.Empty"
# The head view of a record (views.proto) has the record's field numbers.
RECORD_TYPES = (f"{PACKAGE}.TaskRecord", f"{PACKAGE}.TaskRecordHead")
LINE_LENGTH = 110


class ContractError(Exception):
    """The protos declare a contract that does not hold together."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One method of a bus service, with what its options say."""

    const: str  # the module-level name: the kind's name without KIND_
    kind: int
    kind_name: str
    service: str  # the proto service
    name: str  # the rpc
    endpoint: str
    role: str  # "method", "stream" or "local"
    request: str  # full proto names
    reply: str


@dataclasses.dataclass(frozen=True)
class Contract:
    kinds: list[tuple[str, int]]  # every Kind but UNSPECIFIED, by number
    entries: list[Entry]  # by kind
    records: list[str]  # messages with records in field 1, by full name
    modules: dict[str, str]  # proto file -> python module (counters_pb2 ...)


def _pool(fds: descriptor_pb2.FileDescriptorSet) -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return pool


def _options(pool: descriptor_pool.DescriptorPool, kind: str, options: object) -> dict[str, object]:
    """The bus options set on ``options`` (a descriptor_pb2 *Options), by name, parsed
    with this pool's extensions (the running protobuf knows nothing of them)."""
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"google.protobuf.{kind}"))
    parsed = cls.FromString(options.SerializeToString())  # type: ignore[attr-defined]
    return {
        ext.name: value
        for ext, value in parsed.ListFields()
        if ext.is_extension and ext.full_name.startswith(PACKAGE + ".")
    }


def read(fds: descriptor_pb2.FileDescriptorSet) -> Contract:
    pool = _pool(fds)
    kind_enum = pool.FindEnumTypeByName(KIND_ENUM)
    kinds = sorted(((v.name, v.number) for v in kind_enum.values if v.number), key=lambda kv: kv[1])
    name_of = {number: name for name, number in kinds}
    bus = sorted((fd for fd in fds.file if fd.package == PACKAGE), key=lambda fd: fd.name)
    modules = {fd.name: Path(fd.name).stem + "_pb2" for fd in bus}

    entries: list[Entry] = []
    records: list[str] = []
    for fd in bus:
        for message in fd.message_type:
            if _options(pool, "MessageOptions", message.options).get("records_in_field_1"):
                full = f"{PACKAGE}.{message.name}"
                _check_records(pool, full)
                records.append(full)
        for service in fd.service:
            opts = _options(pool, "ServiceOptions", service.options)
            endpoint = str(opts.get("endpoint", ""))
            stream, local = bool(opts.get("stream")), bool(opts.get("local"))
            where = f"{fd.name}: service {service.name}"
            if stream == bool(endpoint) or (local and not endpoint):
                raise ContractError(f"{where}: either an endpoint (request/reply, local) or stream = true")
            role = "stream" if stream else "local" if local else "method"
            for method in service.method:
                kind = _options(pool, "MethodOptions", method.options).get("kind")
                if not isinstance(kind, int) or kind not in name_of:
                    raise ContractError(f"{where}.{method.name}: no (kind), or one Kind does not have")
                for full in (method.input_type, method.output_type):
                    _module_of(pool, full.lstrip("."), modules)  # a bus message, or Empty
                entries.append(
                    Entry(
                        const=name_of[kind].removeprefix("KIND_"),
                        kind=kind,
                        kind_name=name_of[kind],
                        service=service.name,
                        name=method.name,
                        endpoint=endpoint,
                        role=role,
                        request=method.input_type.lstrip("."),
                        reply=method.output_type.lstrip("."),
                    )
                )
    _check_kinds(kinds, entries)
    entries.sort(key=lambda e: e.kind)
    return Contract(kinds=kinds, entries=entries, records=sorted(records), modules=modules)


def _check_records(pool: descriptor_pool.DescriptorPool, full: str) -> None:
    field = pool.FindMessageTypeByName(full).fields_by_number.get(1)
    if (
        field is None
        or not field.is_repeated
        or field.message_type is None
        or field.message_type.full_name not in RECORD_TYPES
    ):
        raise ContractError(f"{full}: records_in_field_1, but field 1 is not repeated TaskRecord")


def _check_kinds(kinds: list[tuple[str, int]], entries: list[Entry]) -> None:
    seen: dict[int, Entry] = {}
    for e in entries:
        if e.kind in seen:
            first = seen[e.kind]
            raise ContractError(
                f"{e.kind_name} declared twice: {first.service}.{first.name} and {e.service}.{e.name}"
            )
        seen[e.kind] = e
    missing = [name for name, number in kinds if number not in seen]
    if missing:
        raise ContractError(f"kinds no method declares: {missing}")


def _module_of(pool: descriptor_pool.DescriptorPool, full: str, modules: dict[str, str]) -> str:
    if full == EMPTY:
        return "empty_pb2"
    file = pool.FindMessageTypeByName(full).file.name
    if file not in modules:
        raise ContractError(f"{full}: not a message of {PACKAGE}")
    return modules[file]


HEADER = '''\
# Generated by tools/gen_contract.py from protos/taskyard/bus/v1 (the options of
# contract.proto). DO NOT EDIT: change the protos and run `make gen`.
"""The bus contract as the protos declare it.

Every request/reply method (``Method``, by kind in ``METHODS``), every message that
is not request/reply (``Stream``, in ``STREAMS``: ``open`` reads one from an
envelope's bytes, ``read`` from a decoded envelope, ``encode`` wraps one), the
result-store's own writes, never on the wire (``LOCAL``), every envelope kind
(``KINDS``) and the messages that keep their records in field 1
(``RECORDS_IN_FIELD_1``). core.contract adds the policy: who may send each kind,
to whom, and the handlers' checks.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from google.protobuf import empty_pb2
from google.protobuf.message import Message

from taskyard.bus.v1 import {imports}

Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Method(Generic[Rq, Rp]):
    """One request/reply method: served by ``service``, carried under ``kind``."""

    service: str
    name: str
    kind: int
    request: type[Rq]
    reply: type[Rp]

    def __str__(self) -> str:
        return f"{{self.service}}.{{self.name}}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Stream(Generic[Rq, Rp]):
    """One message that is not request/reply: ``message`` under ``kind``, and the
    answer that comes back under the same kind (``answer``; Empty: none)."""

    family: str
    name: str
    kind: int
    message: type[Rq]
    answer: type[Rp]

    def open(self, raw: bytes) -> Rq | None:
        """The message of an envelope of this kind; None for an envelope of another
        kind. Raises DecodeError when the bytes are not a well-formed envelope and message."""
        return _open(raw, self.kind, self.message)

    def read(self, env: envelope_pb2.Envelope) -> Rq | None:
        """The message of an already decoded envelope of this kind; None for another kind."""
        return _read(env, self.kind, self.message)

    def encode(self, message: Rq | bytes, *, message_id: str = "") -> bytes:
        """An envelope of this kind around ``message`` (or its serialized bytes)."""
        return _encode(self.kind, message, message_id)

    def open_answer(self, raw: bytes) -> Rp | None:
        """The answer in an envelope of this kind; None for another kind."""
        return _open(raw, self.kind, self.answer)

    def encode_answer(self, answer: Rp | bytes, *, message_id: str = "") -> bytes:
        """An envelope of this kind around an answer (``message_id``: the message's)."""
        return _encode(self.kind, answer, message_id)


M = TypeVar("M", bound=Message)


def _open(raw: bytes, kind: int, message_type: type[M]) -> M | None:
    return _read(envelope_pb2.Envelope.FromString(raw), kind, message_type)


def _read(env: envelope_pb2.Envelope, kind: int, message_type: type[M]) -> M | None:
    if env.kind != kind:
        return None
    message = message_type()
    message.ParseFromString(env.payload)
    return message


def _encode(kind: int, message: Message | bytes, message_id: str) -> bytes:
    env = envelope_pb2.Envelope(
        message_id=message_id or uuid.uuid4().hex,
        kind=kind,  # type: ignore[arg-type]
        payload=message if isinstance(message, bytes) else message.SerializeToString(),
    )
    return env.SerializeToString()
'''


def _lines(contract: Contract, module_of: dict[str, str]) -> Iterable[str]:
    def py(full: str) -> str:
        if full == EMPTY:
            return "empty_pb2.Empty"
        return f"{module_of[full]}.{full.removeprefix(PACKAGE + '.')}"

    for role, title in (
        ("method", "Request/reply methods, by kind."),
        ("stream", "Messages that are not request/reply, by kind."),
        ("local", "The result-store's own writes, never on the wire."),
    ):
        yield f"# --- {title}"
        for e in (e for e in contract.entries if e.role == role):
            yield f"# {e.service}.{e.name}"
            if role == "stream":
                yield (
                    f"{e.const} = Stream(family={e.service!r}, name={e.name!r}, "
                    f"kind=envelope_pb2.{e.kind_name}, message={py(e.request)}, answer={py(e.reply)})"
                )
            else:
                yield (
                    f"{e.const} = Method(service={e.endpoint!r}, name={e.name!r}, "
                    f"kind=envelope_pb2.{e.kind_name}, request={py(e.request)}, reply={py(e.reply)})"
                )
        yield ""
    for name, role, cls in (("METHODS", "method", "Method"), ("STREAMS", "stream", "Stream")):
        yield f"{name}: Mapping[int, {cls}[Any, Any]] = {{"
        yield from (f"    {e.const}.kind: {e.const}," for e in contract.entries if e.role == role)
        yield "}"
    yield "LOCAL: Mapping[int, Method[Any, Any]] = {"
    yield from (f"    {e.const}.kind: {e.const}," for e in contract.entries if e.role == "local")
    yield "}"
    yield "# What `from taskyard.bus.v1.contract import *` takes: the declarations, by their kinds' names."
    yield "__all__ = ["
    yield '    "Method",'
    yield '    "Stream",'
    yield from (f'    "{e.const}",' for e in contract.entries)
    yield "]"
    yield "# Every envelope kind but KIND_UNSPECIFIED, by number."
    yield "KINDS: tuple[int, ...] = ("
    yield from (f"    envelope_pb2.{name}," for name, _ in contract.kinds)
    yield ")"
    yield "# Field 1 holds the task records: their bytes pass from one to another as they are."
    yield "RECORDS_IN_FIELD_1: frozenset[type[Message]] = frozenset({"
    yield from (f"    {py(full)}," for full in contract.records)
    yield "})"


def generate(fds: descriptor_pb2.FileDescriptorSet) -> str:
    """The module's text for ``fds``, formatted."""
    contract = read(fds)
    pool = _pool(fds)
    module_of: dict[str, str] = {}
    used: set[str] = {"envelope_pb2"}
    wanted = [f for e in contract.entries for f in (e.request, e.reply)] + contract.records
    for full in wanted:
        if full != EMPTY:
            module_of[full] = _module_of(pool, full, contract.modules)
            used.add(module_of[full])
    text = (
        HEADER.format(imports=", ".join(sorted(used)))
        + "\n\n"
        + "\n".join(_lines(contract, module_of))
        + "\n"
    )
    return _format(text)


def _format(text: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", f"--line-length={LINE_LENGTH}", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ContractError(f"ruff format failed: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    fds = descriptor_pb2.FileDescriptorSet.FromString(Path(argv[1]).read_bytes())
    try:
        text = generate(fds)
    except ContractError as exc:
        print(f"gen_contract: error: {exc}", file=sys.stderr)
        return 1
    out = Path(argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
