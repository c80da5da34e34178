"""The four clients against one live `taskyard dev`: the conformance scenarios
(clients/conformance/README.md) in Python, Go, TypeScript and Java, each client's
`add(2, 3)` example, the tenants example whose lines the Go, TypeScript and Java READMEs
show, and a trace begun in the Go example's OpenTelemetry span that continues through the
task.

The Go, TypeScript and Java programs are built by `make clients` (CI runs it first); a
missing build fails here with that instruction rather than skipping.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.dev_run import dev_argv, until_ready
from support.observability import running_jaeger, service_of, tracing_env, wait_for_spans
from support.run_summary import CONFORMANCE_PROPERTY, RecordProperty

from taskyard.cli import jaeger as jaeger_launcher
from taskyard.cli.procs import free_port, stop_processes

# One live suite for the module (and so one test process under xdist).
# The first test also waits for the module's suite (up to READY_TIMEOUT) before its runner
# (up to RUN_TIMEOUT): the per-test limit covers both with room to fail cleanly.
READY_TIMEOUT = 120
RUN_TIMEOUT = 150
pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.timeout(READY_TIMEOUT + RUN_TIMEOUT + 60),
    pytest.mark.xdist_group("client-conformance"),
]

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = (ROOT / "clients/conformance/scenarios.txt").read_text().split()
TOKEN = "conformance-token-0123456789"
READ_TOKEN = "reader-token-0123456789"
# Makes the suite's limit before the runners run; the runners use it for redrives and breakers only.
ADMIN_TOKEN = "conformance-admin-0123456789"
# tenant_isolation: a submit,read token of each of two tenants.
TENANT_TOKENS = {"A": "tenant-a-token-0123456789", "B": "tenant-b-token-0123456789"}


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

# What `make clients` builds, and how each language runs its runner and its example.
RUNNERS: dict[str, list[str]] = {
    "python": [sys.executable, "clients/python/conformance.py"],
    "go": ["clients/go/bin/conformance"],
    "typescript": ["node", "clients/typescript/conformance/run.mjs"],
    "java": ["clients/java/run-conformance"],
}


def _readme_examples() -> dict[str, str]:
    """The example column of the README's "Clients" table: the commands run as shown."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Clients") :].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")][1:]
    examples = {}
    for language, _install, example, _guide in rows:
        examples[language.split()[0].lower()] = example.strip().strip("`")
    return examples


EXAMPLES = _readme_examples()
BUILT: dict[str, Path] = {
    "go": ROOT / "clients/go/bin/conformance",
    "typescript": ROOT / "clients/typescript/dist/index.js",
    "java": ROOT / "clients/java/target/classpath.txt",
}


@dataclass(frozen=True, kw_only=True)
class Suite:
    target: str
    jaeger: jaeger_launcher.Jaeger
    # A port this module holds bound but not listening: nobody else can take it, and a
    # connect to it is refused (a port only chosen free could be taken by another test).
    closed_port: int

    def client_env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}
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


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    work = tmp_path_factory.mktemp("conformance")
    tokens = work / "tokens"
    tokens.write_text(
        f"{TOKEN} submit,read conformance\n{READ_TOKEN} read reader\n{ADMIN_TOKEN} admin conformance-admin\n"
        + "".join(f"{TENANT_TOKENS[x]} submit,read tenant-{x.lower()} tenant={TENANTS[x]}\n" for x in TENANTS)
    )
    port = free_port()
    with running_jaeger(work) as jaeger, socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}
        env.update(
            tracing_env(jaeger),
            TASKYARD_TRANSPORT="ipc",
            TASKYARD_IPC_DIR=str(work / "ipc"),
            TASKYARD_AUTH_TOKENS_FILE=str(tokens),
            TASKYARD_TOKEN=TOKEN,  # dev's readiness probe: a pool serving tasks
            PYTHONUNBUFFERED="1",
        )
        argv = dev_argv(work / "data", port)
        proc = subprocess.Popen(
            argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        log: list[str] = []
        try:
            until_ready(proc, log, timeout=READY_TIMEOUT)
            target = f"127.0.0.1:{port}"
            for command in (CREATE_LIMIT, *CREATE_TENANTS):
                _as_admin(target, command)
            yield Suite(target=target, jaeger=jaeger, closed_port=closed.getsockname()[1])
        finally:
            stop_processes([proc], grace=15)  # type: ignore[list-item]  # dev stops its services and PostgreSQL itself


def _as_admin(target: str, command: list[str]) -> None:
    """The limit of the flow-control scenarios, or a tenant of tenant_isolation, made with
    the CLI and an admin token (an operator's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}
    env.update(TASKYARD_TARGET=target, TASKYARD_TOKEN=ADMIN_TOKEN)
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


def _require_built(language: str) -> None:
    built = BUILT.get(language)
    if built is not None and not built.exists():
        pytest.fail(
            f"the {language} client is not built ({built.relative_to(ROOT)} missing): run `make clients`"
        )


def _run(
    argv: list[str], env: dict[str, str], timeout: float = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run a client program in a session of its own: on timeout the whole group goes (a
    `go run` leaves the program it built), and what it printed is in the failure."""
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


@pytest.mark.parametrize("language", list(RUNNERS))
def test_conformance_scenarios(suite: Suite, language: str, record_property: RecordProperty) -> None:
    _require_built(language)
    done = _run(RUNNERS[language], suite.client_env())
    out = done.stdout.splitlines()
    reported = [m.group(2) for line in out if (m := re.match(r"(PASS|FAIL) (\w+)", line))]
    failed = [line for line in out if line.startswith("FAIL ")]
    summary = out[-1] if out else ""
    record_property(CONFORMANCE_PROPERTY, summary)  # in the run's summary (conftest.py)
    transcript = f"{done.stdout}\n{done.stderr[-4000:]}"
    assert reported == SCENARIOS, f"scenarios reported out of order or missing:\n{transcript}"
    assert not failed and done.returncode == 0, transcript
    assert summary == f"{language} conformance: {len(SCENARIOS)}/{len(SCENARIOS)} passed", transcript


def _example(language: str) -> list[str]:
    command = EXAMPLES[language]
    if command.startswith("python "):  # this interpreter, the one with taskyard installed
        command = f"{sys.executable} {command.removeprefix('python ')}"
    return ["bash", "-c", command]


def test_readme_lists_every_client() -> None:
    assert sorted(EXAMPLES) == sorted(RUNNERS)


@pytest.mark.parametrize("language", list(RUNNERS))
def test_add_example_prints_five(suite: Suite, language: str) -> None:
    _require_built(language)
    done = _run(_example(language), suite.client_env())
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stdout.split() == ["5"], done.stdout


def test_trace_from_the_go_example_continues_through_the_task(suite: Suite) -> None:
    _require_built("go")
    env = suite.client_env(**suite.jaeger.otel_environment(), OTEL_SERVICE_NAME="add-example")
    done = _run(_example("go"), env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    found = re.search(r"trace_id=([0-9a-f]{32})", done.stderr)
    assert found, f"the example printed no trace id:\n{done.stderr}"

    def complete(trace: dict[str, object]) -> bool:
        spans = trace["spans"]
        assert isinstance(spans, list)
        services = {service_of(trace, s) for s in spans}
        return {"add-example", "taskyard-gateway", "taskyard-worker-pool"} <= services

    trace = wait_for_spans(suite.jaeger, found.group(1), complete)
    spans = trace["spans"]
    roots = [s for s in spans if not s.get("references")]
    assert [s["operationName"] for s in roots] == ["add-example"], [s["operationName"] for s in spans]
    assert "process default" in {s["operationName"] for s in spans}, [s["operationName"] for s in spans]


@dataclass(frozen=True, kw_only=True)
class TenantsExample:
    readme: str
    source: str
    # Run from the repository root with the tenant's name as the last argument.
    argv: list[str]


# The Tenants section of each client's README shows lines of these programs.
TENANTS_EXAMPLES = {
    "go": TenantsExample(
        readme="clients/go/README.md",
        source="clients/go/examples/tenants/main.go",
        argv=["bash", "-c", 'cd clients/go/examples && go run ./tenants "$0"'],
    ),
    "typescript": TenantsExample(
        readme="clients/typescript/README.md",
        source="clients/typescript/examples/tenants.mjs",
        argv=["node", "clients/typescript/examples/tenants.mjs"],
    ),
    "java": TenantsExample(
        readme="clients/java/README.md",
        source="clients/java/examples/Tenants.java",
        argv=["clients/java/run", "examples/Tenants.java"],
    ),
}


def _tenants_block(readme: str) -> str:
    text = (ROOT / readme).read_text()
    section = text[text.index("\n## Tenants\n") :].split("\n## ", 2)[1]
    found = re.search(r"```\w+\n(.*?)```", section, re.DOTALL)
    assert found, f"{readme}'s Tenants section has no code block"
    return found.group(1)


@pytest.mark.parametrize("language", list(TENANTS_EXAMPLES))
def test_readme_tenants_block_is_in_the_example(language: str) -> None:
    """The README's block is the example's own lines (as indented there), so running the
    example runs the block as written."""
    example = TENANTS_EXAMPLES[language]
    block = _tenants_block(example.readme)
    source = (ROOT / example.source).read_text()
    assert any(textwrap.indent(block, indent) in source for indent in ("", "  ")), (
        f"{example.readme}'s Tenants block is not lines of {example.source}"
    )


@pytest.mark.parametrize("language", list(TENANTS_EXAMPLES))
def test_tenants_example_makes_a_tenant_and_runs_as_it(suite: Suite, language: str) -> None:
    _require_built(language)
    name = f"readme-{language}-{secrets.token_hex(4)}"
    env = suite.client_env()
    env["TASKYARD_TOKEN"] = ADMIN_TOKEN  # an operator's
    done = _run([*TENANTS_EXAMPLES[language].argv, name], env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert f"listed {name} ACTIVE" in lines, done.stdout
    assert lines[-4:] == [
        f"suspended {name} SUSPENDED",
        f"resumed {name} ACTIVE",
        f"add(2, 3) -> 5 as {name}",
        f"got {name} ACTIVE max concurrency 50 weight 2",
    ], done.stdout


def _retried_in_source(path: str, pattern: str) -> list[str]:
    return ["/".join(m) for m in re.findall(pattern, (ROOT / path).read_text())]


def test_every_client_resends_the_same_methods() -> None:
    """The methods each client has gRPC resend on UNAVAILABLE, read from its source: one
    list, in one order, so that a read added to one client is added to all."""
    from taskyard.client import _credentials

    python = [f"{m['service'].removeprefix('taskyard.v1.')}/{m['method']}" for m in _credentials._RETRIED]
    clients = {
        "go": _retried_in_source(
            "clients/go/retry.go", r'\{"service": "taskyard\.v1\.(\w+)", "method": "(\w+)"\}'
        ),
        "typescript": _retried_in_source(
            "clients/typescript/src/interceptors.ts", r'(?m)^  "taskyard\.v1\.(\w+)/(\w+)",$'
        ),
        "java": _retried_in_source(
            "clients/java/src/main/java/dev/taskyard/client/RetryPolicy.java", r'"(\w+Service)/(\w+)"'
        ),
    }
    assert "LimitService/GetLimit" in python
    for language, methods in clients.items():
        assert methods == python, language
