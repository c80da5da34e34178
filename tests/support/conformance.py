"""A live ``taskyard dev`` for the cross-language conformance scenarios
(clients/conformance/README.md): its tokens, the limit and the tenants the README
makes, the environment a runner reads, and a runner run in a session of its own."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.dev_run import dev_argv, until_ready
from taskyard.cli.procs import free_port, stop_processes

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = (ROOT / "clients/conformance/scenarios.txt").read_text().split()
TOKEN = "conformance-token-0123456789"
READ_TOKEN = "reader-token-0123456789"
# Makes the suite's limit before the runners run; the runners use it for redrives and breakers only.
ADMIN_TOKEN = "conformance-admin-0123456789"
# tenant_isolation: a submit,read token of each of two tenants.
TENANT_TOKENS = {"A": "tenant-a-token-0123456789", "B": "tenant-b-token-0123456789"}
# The suite's start, then a runner's run.
READY_TIMEOUT = 120
RUN_TIMEOUT = 150

# What `make clients` builds, and how each language runs its runner.
RUNNERS: dict[str, list[str]] = {
    "python": [sys.executable, "clients/python/conformance.py"],
    "go": ["clients/go/bin/conformance"],
    "typescript": ["node", "clients/typescript/conformance/run.mjs"],
    "java": ["clients/java/run-conformance"],
}


def _readme_limit_command() -> list[str]:
    """How the conformance README makes the limit its runners name (TASKYARD_LIMIT): the
    command run as shown, less the leading `taskyard`."""
    text = (ROOT / "clients/conformance/README.md").read_text()
    found = re.search(r"`taskyard (limit create [^`]+)`", text)
    assert found, "clients/conformance/README.md shows no `taskyard limit create ...`"
    return found.group(1).split()


def _readme_tenant_commands() -> list[list[str]]:
    """How the conformance README makes the tenants of tenant_isolation, as shown."""
    text = (ROOT / "clients/conformance/README.md").read_text()
    found = re.findall(r"`taskyard (tenant create [^`]+)`", text)
    assert len(found) == 2, "clients/conformance/README.md shows no two `taskyard tenant create ...`"
    return [command.split() for command in found]


CREATE_LIMIT = _readme_limit_command()
LIMIT = CREATE_LIMIT[2]
CREATE_TENANTS = _readme_tenant_commands()
TENANTS = {x: command[2] for x, command in zip("AB", CREATE_TENANTS, strict=True)}


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}


@dataclass(frozen=True, kw_only=True)
class Suite:
    target: str
    # A port held bound but not listening: nobody else can take it, and a connect to it
    # is refused (a port only chosen free could be taken by another test).
    closed_port: int

    def client_env(self, **extra: str) -> dict[str, str]:
        env = _clean_env()
        env.update(
            TASKYARD_TARGET=self.target,
            TASKYARD_TOKEN=TOKEN,
            TASKYARD_READ_TOKEN=READ_TOKEN,
            TASKYARD_CLOSED_TARGET=f"127.0.0.1:{self.closed_port}",
            TASKYARD_LIMIT=LIMIT,
            TASKYARD_ADMIN_TOKEN=ADMIN_TOKEN,
            **{f"TASKYARD_TENANT_{x}": name for x, name in TENANTS.items()},
            **{f"TASKYARD_TENANT_{x}_TOKEN": token for x, token in TENANT_TOKENS.items()},
            **extra,
        )
        return env


@contextlib.contextmanager
def running_dev(work: Path, env: Mapping[str, str], tokens: str, *, cwd: Path | None = None) -> Iterator[str]:
    """``taskyard dev`` in ``work`` with the tokens file ``tokens`` and ``env`` (the bus
    transport, tracing ...), its gRPC target yielded once it is ready; stopped on exit.
    ``TASKYARD_TOKEN`` (dev's readiness probe: a pool serving tasks) is in ``env``."""
    tokens_file = work / "tokens"
    tokens_file.write_text(tokens)
    port = free_port()
    full = _clean_env()
    full.update(TASKYARD_AUTH_TOKENS_FILE=str(tokens_file), PYTHONUNBUFFERED="1", **env)
    proc = subprocess.Popen(
        dev_argv(work / "data", port),
        cwd=cwd,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    log: list[str] = []
    try:
        until_ready(proc, log, timeout=READY_TIMEOUT)
        yield f"127.0.0.1:{port}"
    finally:
        stop_processes([proc], grace=15)  # dev stops its services and PostgreSQL itself


@contextlib.contextmanager
def running_suite(work: Path, env: Mapping[str, str], *, cwd: Path | None = None) -> Iterator[Suite]:
    """The client scenarios' suite: ``running_dev`` with their tokens, and the limit and
    the tenants the README makes."""
    tokens = (
        f"{TOKEN} submit,read conformance\n{READ_TOKEN} read reader\n{ADMIN_TOKEN} admin conformance-admin\n"
        + "".join(f"{TENANT_TOKENS[x]} submit,read tenant-{x.lower()} tenant={TENANTS[x]}\n" for x in TENANTS)
    )
    with (
        socket.socket() as closed,
        running_dev(work, {"TASKYARD_TOKEN": TOKEN, **env}, tokens, cwd=cwd) as target,
    ):
        closed.bind(("127.0.0.1", 0))
        for command in (CREATE_LIMIT, *CREATE_TENANTS):
            as_admin(target, command)
        yield Suite(target=target, closed_port=closed.getsockname()[1])


def as_admin(target: str, command: list[str], token: str = ADMIN_TOKEN) -> None:
    """The limit of the flow-control scenarios, or a tenant of tenant_isolation, made with
    the CLI and an admin token (an operator's)."""
    env = _clean_env()
    env.update(TASKYARD_TARGET=target, TASKYARD_TOKEN=token)
    done = subprocess.run(
        [sys.executable, "-m", "taskyard.cli", *command],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"taskyard {' '.join(command)}:\n{done.stdout}\n{done.stderr}"


def run_program(
    argv: list[str], env: dict[str, str], timeout: float = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run a client program (or a driver) in a session of its own: on timeout the whole
    group goes (a `go run` leaves the program it built, a driver the workers it started),
    and what it printed is in the failure."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(argv)} did not finish in {timeout} s:\n{out}\n{err[-4000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a runner reported: the scenarios in order, the failed lines, its last line."""

    reported: list[str]
    failed: list[str]
    summary: str
    transcript: str
    returncode: int

    @classmethod
    def of(cls, done: subprocess.CompletedProcess[str]) -> Outcome:
        out = done.stdout.splitlines()
        return cls(
            reported=[m.group(2) for line in out if (m := re.match(r"(PASS|FAIL) (\w+)", line))],
            failed=[line for line in out if line.startswith("FAIL ")],
            summary=out[-1] if out else "",
            transcript=f"{done.stdout}\n{done.stderr[-4000:]}",
            returncode=done.returncode,
        )

    def check(self, language: str) -> None:
        assert self.reported == SCENARIOS, f"scenarios reported out of order or missing:\n{self.transcript}"
        assert not self.failed and self.returncode == 0, self.transcript
        assert self.summary == f"{language} conformance: {len(SCENARIOS)}/{len(SCENARIOS)} passed", (
            self.transcript
        )
