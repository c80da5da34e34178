"""The four clients against one live `taskyard dev`: the conformance scenarios
(clients/conformance/README.md) in Python, Go, TypeScript and Java, each client's
`add(2, 3)` example, the tenants example whose lines the Go, TypeScript and Java READMEs
show, and a trace begun in the Go example's OpenTelemetry span that continues through the
task.

The Go, TypeScript and Java programs are built by `make clients` (CI runs it first); a
missing build fails here with that instruction rather than skipping.
"""

from __future__ import annotations

import re
import secrets
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.conformance import (
    ADMIN_TOKEN,
    READY_TIMEOUT,
    ROOT,
    RUN_TIMEOUT,
    RUNNERS,
    Outcome,
    Suite,
    run_program,
    running_suite,
)
from support.dev_run import scratch_dir
from support.observability import running_jaeger, service_of, tracing_env, wait_for_spans
from support.run_summary import CONFORMANCE_PROPERTY, RecordProperty

from taskyard.cli import jaeger as jaeger_launcher

# One live suite for the module (and so one test process under xdist).
# The first test also waits for the module's suite (up to READY_TIMEOUT) before its runner
# (up to RUN_TIMEOUT): the per-test limit covers both with room to fail cleanly.
pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.timeout(READY_TIMEOUT + RUN_TIMEOUT + 60),
    pytest.mark.xdist_group("client-conformance"),
]


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
class Traced:
    """The module's suite, its traces exported to a local Jaeger."""

    suite: Suite
    jaeger: jaeger_launcher.Jaeger

    def client_env(self, **extra: str) -> dict[str, str]:
        return self.suite.client_env(**extra)


@pytest.fixture(scope="module")
def suite() -> Iterator[Traced]:
    # Not under tmp_path: pgserver's own user must reach the data (dev_run.scratch_dir).
    with scratch_dir("ty-conformance-") as work, running_jaeger(work) as jaeger:
        env = {**tracing_env(jaeger), "TASKYARD_TRANSPORT": "ipc", "TASKYARD_IPC_DIR": str(work / "ipc")}
        with running_suite(work, env) as live:
            yield Traced(suite=live, jaeger=jaeger)


def _require_built(language: str) -> None:
    built = BUILT.get(language)
    if built is not None and not built.exists():
        pytest.fail(
            f"the {language} client is not built ({built.relative_to(ROOT)} missing): run `make clients`"
        )


@pytest.mark.parametrize("language", list(RUNNERS))
def test_conformance_scenarios(suite: Traced, language: str, record_property: RecordProperty) -> None:
    _require_built(language)
    outcome = Outcome.of(run_program(RUNNERS[language], suite.client_env()))
    record_property(CONFORMANCE_PROPERTY, outcome.summary)  # in the run's summary (conftest.py)
    outcome.check(language)


def _example(language: str) -> list[str]:
    command = EXAMPLES[language]
    if command.startswith("python "):  # this interpreter, the one with taskyard installed
        command = f"{sys.executable} {command.removeprefix('python ')}"
    return ["bash", "-c", command]


def test_readme_lists_every_client() -> None:
    assert sorted(EXAMPLES) == sorted(RUNNERS)


@pytest.mark.parametrize("language", list(RUNNERS))
def test_add_example_prints_five(suite: Traced, language: str) -> None:
    _require_built(language)
    done = run_program(_example(language), suite.client_env())
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert done.stdout.split() == ["5"], done.stdout


def test_trace_from_the_go_example_continues_through_the_task(suite: Traced) -> None:
    _require_built("go")
    env = suite.client_env(**suite.jaeger.otel_environment(), OTEL_SERVICE_NAME="add-example")
    done = run_program(_example("go"), env)
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
def test_tenants_example_makes_a_tenant_and_runs_as_it(suite: Traced, language: str) -> None:
    _require_built(language)
    name = f"readme-{language}-{secrets.token_hex(4)}"
    env = suite.client_env()
    env["TASKYARD_TOKEN"] = ADMIN_TOKEN  # an operator's
    done = run_program([*TENANTS_EXAMPLES[language].argv, name], env)
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
