"""The bus contract generated from the protos (tools/gen_contract.py ->
taskyard.bus.v1.contract): what gen-check compares is what the protos say, a proto
that says something else gives another module (or none), every envelope kind is
declared once, and a stream declaration reads and writes its own kind only."""

from __future__ import annotations

import ast
import collections
import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, empty_pb2
from grpc_tools import protoc  # type: ignore[import-untyped]

from taskyard.bus.v1 import contract as generated
from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, event_pb2, task_record_pb2, views_pb2
from taskyard.core import contract

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "clients/python/taskyard/bus/v1/contract.py"
WELL_KNOWN = Path(protoc.__file__).parent / "_proto"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_contract", ROOT / "tools/gen_contract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _generator()


def _compiled(protos: Path, tmp_path: Path) -> descriptor_pb2.FileDescriptorSet:
    """Every proto under ``protos`` compiled as tools/gen.sh compiles them."""
    files = sorted(str(p.relative_to(protos)) for p in protos.rglob("*.proto"))
    out = tmp_path / "protos.binpb"
    args = ["protoc", f"-I{protos}", f"-I{WELL_KNOWN}", f"--descriptor_set_out={out}", "--include_imports"]
    assert protoc.main([*args, *files]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _tweaked(tmp_path: Path, file: str, old: str, new: str) -> descriptor_pb2.FileDescriptorSet:
    """The protos with one edit in one bus file, compiled."""
    protos = tmp_path / "protos"
    shutil.copytree(ROOT / "protos", protos)
    path = protos / "taskyard/bus/v1" / file
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return _compiled(protos, tmp_path)


def test_the_committed_module_is_what_the_protos_give(tmp_path: Path) -> None:
    assert gen.generate(_compiled(ROOT / "protos", tmp_path)) == COMMITTED.read_text()


def test_a_proto_that_disagrees_gives_another_module(tmp_path: Path) -> None:
    # What gen-check's diff then shows: the rpc renamed in tasks.proto, not in the module.
    fds = _tweaked(tmp_path, "tasks.proto", "rpc GetTasks(", "rpc FetchTasks(")
    text = gen.generate(fds)
    assert text != COMMITTED.read_text()
    assert 'name="FetchTasks"' in text and 'name="GetTasks"' not in text


@pytest.mark.parametrize(
    ("file", "old", "new", "error"),
    [
        # Two methods under one kind.
        (
            "tasks.proto",
            "option (kind) = KIND_STORE_LIST;",
            "option (kind) = KIND_STORE_GET;",
            "KIND_STORE_GET declared twice",
        ),
        # A kind no method declares.
        ("counters.proto", "option (kind) = KIND_STORE_COUNTERS;", "", "no \\(kind\\)"),
        # Records in field 1 on a message that keeps something else there.
        (
            "dispatch.proto",
            "message PoolReport {",
            "message PoolReport {\n  option (records_in_field_1) = true;",
            "PoolReport: records_in_field_1",
        ),
    ],
)
def test_a_contract_that_does_not_hold_is_refused(
    tmp_path: Path, file: str, old: str, new: str, error: str
) -> None:
    fds = _tweaked(tmp_path, file, old, new)
    with pytest.raises(gen.ContractError, match=error):
        gen.generate(fds)


def test_every_kind_is_used_by_exactly_one_method_or_stream() -> None:
    declared = [
        *(m.kind for m in generated.METHODS.values()),
        *(s.kind for s in generated.STREAMS.values()),
        *(m.kind for m in generated.LOCAL.values()),
    ]
    kinds = [v for v in envelope_pb2.Kind.values() if v != envelope_pb2.KIND_UNSPECIFIED]
    assert [k for k, n in collections.Counter(declared).items() if n > 1] == []
    assert sorted(declared) == sorted(kinds) == list(generated.KINDS)
    # Each declaration is the module's name for its kind, and core.contract's.
    decls: list[contract.Method[Any, Any] | contract.Stream[Any, Any]] = [
        *generated.METHODS.values(),
        *generated.STREAMS.values(),
        *generated.LOCAL.values(),
    ]
    for decl in decls:
        name = envelope_pb2.Kind.Name(decl.kind).removeprefix("KIND_")
        assert getattr(generated, name) is decl
        assert getattr(contract, name) is decl


def test_records_in_field_1_are_records_on_the_wire() -> None:
    assert {m.DESCRIPTOR.name for m in generated.RECORDS_IN_FIELD_1} >= {
        "SubmitRequest",
        "InsertTasksRequest",
        "LeaseTasksReply",
        "Dispatch",
        "TaskRecordHeads",
    }
    record = task_record_pb2.TaskRecord(id="t1", name="n", queue="q")
    for message_type in generated.RECORDS_IN_FIELD_1:
        field = message_type.DESCRIPTOR.fields_by_number[1]
        message = message_type()
        getattr(message, field.name).add().ParseFromString(record.SerializeToString())
        heads = views_pb2.TaskRecordHeads.FromString(message.SerializeToString())
        assert [h.id for h in heads.tasks] == ["t1"]


def test_a_stream_opens_its_own_kind_only() -> None:
    batch = event_pb2.EventBatch(events=[event_pb2.Event(type="task.started")])
    raw = contract.EVENTS.encode(batch)
    assert contract.EVENTS.open(raw) == batch
    assert contract.DISPATCH.open(raw) is None
    # Already serialized bytes go in as they are.
    assert contract.EVENTS.open(contract.EVENTS.encode(batch.SerializeToString())) == batch


def test_a_survey_is_answered_under_its_own_kind_and_id() -> None:
    survey = contract.SURVEY.encode(dispatch_pb2.Survey(scheduler_id="s1"))
    asked = envelope_pb2.Envelope.FromString(survey)
    assert contract.SURVEY.read(asked) == dispatch_pb2.Survey(scheduler_id="s1")
    assert contract.DISPATCH.read(asked) is None
    answer = contract.SURVEY.encode_answer(
        dispatch_pb2.SurveyReply(pool_id="p1"), message_id=asked.message_id
    )
    assert envelope_pb2.Envelope.FromString(answer).message_id == asked.message_id
    reply = contract.SURVEY.open_answer(answer)
    assert reply is not None and reply.pool_id == "p1"
    assert contract.ANNOUNCE.answer is empty_pb2.Empty


def _named(path: Path, names: Callable[[str], bool]) -> list[str]:
    """Where ``path``'s code (not its strings or comments) names an attribute, a
    variable or an import for which ``names`` holds."""
    text = path.read_text()
    found: list[str] = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.alias):
            name = node.name
        else:
            continue
        if names(name):
            found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)} {name}")
    return found


def test_services_name_a_stream_by_its_declaration_only() -> None:
    """No call site pairs a stream's kind with a message type by hand: a stream kind
    (KIND_EVENTS, KIND_DISPATCH ...) is named in code only by core.contract, and
    transport.open_message (a kind and a type named apart) is not called."""
    stream_kinds = {envelope_pb2.Kind.Name(k) for k in [*generated.STREAMS, *generated.LOCAL]}
    found: list[str] = []
    for path in sorted((ROOT / "services").rglob("*.py")):
        if path.name == "contract.py" and path.parent.name == "core":
            continue
        found += _named(path, lambda name: name in stream_kinds or name == "open_message")
    assert found == []


# The tests that may name envelope kinds (KIND_*) in code, and why.
TESTS_NAMING_KINDS = {
    # About the kind list itself.
    "tests/unit/test_contract.py": "every kind declared once; a forged method is refused",
    "tests/unit/test_bus_contract_gen.py": "every kind declared once",
    # Refusals: envelopes built by hand on purpose.
    "tests/unit/test_bus_roles.py": "who may send each kind; an insert hidden from the gate's first read",
}


def test_tests_build_and_open_envelopes_by_their_declarations() -> None:
    """A test wraps and opens a bus message as the services do, through its one
    declaration (``contract.EVENTS.open(raw)``, ``contract.STORE_GET.request``,
    ``contract.POOL_REPORT.encode(...)``), never a kind and a message type named
    apart; only the files above name a kind."""
    found: list[str] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if str(path.relative_to(ROOT)) in TESTS_NAMING_KINDS:
            continue
        found += _named(path, lambda name: name.startswith("KIND_"))
    assert found == []
    missing = [p for p in TESTS_NAMING_KINDS if not (ROOT / p).is_file()]
    assert missing == [], "a file listed in TESTS_NAMING_KINDS is gone: take it off the list"
