"""`taskyard task logs --follow` without a gateway: a stream the gateway cuts goes on
after the last line printed (with a note for people), while a caller's error and a
gateway never reached end the command. (The gateway's side,
GATEWAY_STOPPING at its stop: tests/integration/test_gateway_stop.py; a follow against a
real cluster: tests/integration/test_queue_ops_cli.py.)"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import grpc
import pytest
from click.testing import CliRunner, Result
from support.log_streams import FakeCall, FakeStub
from support.rpc_errors import Ended

from taskyard.cli import errors, logs
from taskyard.cli.gateway import Gateway
from taskyard.cli.main import cli


def _follow(monkeypatch: pytest.MonkeyPatch, stub: FakeStub, output: str = "json") -> Result:
    @contextlib.contextmanager
    def gateway() -> Iterator[Gateway]:
        with grpc.insecure_channel("127.0.0.1:1") as channel:  # never dialled: the stub answers
            g = Gateway(channel)
            g.tasks = stub  # type: ignore[assignment]
            yield g

    monkeypatch.setattr(logs, "gateway", gateway)
    return CliRunner().invoke(cli, ["task", "logs", "t", "--follow", "--output", output])


def test_a_follow_the_gateway_cuts_goes_on_after_the_last_line_printed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub = FakeStub(
        FakeCall(range(2), Ended(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")),
        FakeCall(range(0), Ended(grpc.StatusCode.UNAVAILABLE)),  # the connection dropped
        FakeCall(range(2, 4)),
    )
    result = _follow(monkeypatch, stub)
    assert result.exit_code == 0, result.output
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [x["logs"][0]["offset"] for x in printed] == ["0", "1", "2", "3"]
    assert [r.from_offset for r in stub.requests] == [0, 2, 2]


def test_a_callers_error_ends_the_follow(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = FakeStub(FakeCall(range(1), Ended(grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")))
    result = _follow(monkeypatch, stub)
    assert result.exit_code == errors.EXIT_ERROR
    assert [json.loads(line)["logs"][0]["offset"] for line in result.stdout.splitlines()] == ["0"]
    assert result.stderr == "error: NOT_FOUND (TASK_NOT_FOUND): ended\n"
    assert len(stub.requests) == 1


def test_people_are_told_when_a_follow_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = FakeStub(
        FakeCall(range(1), Ended(grpc.StatusCode.UNAVAILABLE, "GATEWAY_STOPPING")), FakeCall(range(1, 2))
    )
    result = _follow(monkeypatch, stub, output="table")
    assert result.exit_code == 0, result.output
    assert [line.split()[-1] for line in result.stdout.splitlines()] == ["l0", "l1"]
    assert result.stderr.startswith("the stream was cut (UNAVAILABLE GATEWAY_STOPPING); following again in ")


def test_a_gateway_that_cannot_be_reached_is_an_error_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = FakeStub(FakeCall(range(0), Ended(grpc.StatusCode.UNAVAILABLE)))
    result = _follow(monkeypatch, stub)
    assert result.exit_code == errors.EXIT_UNAVAILABLE
    assert result.stderr.startswith("error: UNAVAILABLE")
    assert len(stub.requests) == 1
