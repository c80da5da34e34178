"""docs/tenants.md, run as written against a real cluster with tokens: its ``taskyard``
lines in order (the tokens made by its first block, in a temp dir; the cluster's gateway
as target; each line with the token the doc says it is run with), the tokens file those
lines make against the one it shows, the commands quoted in its text, its Python block
(the cluster's gateway for localhost:50051, the tokens in the environment) and its SQL
line on the cluster's database."""

from __future__ import annotations

import asyncio
import re
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from click.testing import CliRunner, Result
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.cli import procs
from taskyard.cli.main import cli
from taskyard.client import Client, TaskyardError

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "tenants.md"
DOC_TARGET = "localhost:50051"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def lines_of(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip()]


def run(line: str, token: str, target: str | None) -> Result:
    args = shlex.split(line)
    assert args[0] == "taskyard", line
    argv = [*args[1:], "--target", target] if target else args[1:]
    result = CliRunner().invoke(cli, argv, env={"TASKYARD_TOKEN": token, "TASKYARD_TENANT": None})
    assert result.exit_code == 0, f"{line}\n{result.output}"
    return result


def quoted_commands() -> list[str]:
    """The ``taskyard tenant ... acme`` commands the doc's text quotes (not in a block)."""
    text = re.sub(r"```.*?```", "", DOC.read_text(), flags=re.S)
    return re.findall(r"`(taskyard tenant [a-z]+ acme[^`]*)`", text)


def test_the_walkthrough_runs_as_written(
    cluster_factory: Callable[..., Cluster],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sh = blocks("sh")
    assert len(sh) == 6, sh
    make_tokens, create, as_acme, acting, suspend, resume = (lines_of(b) for b in sh)

    # Setting up: the tokens, in the doc's relative file.
    monkeypatch.chdir(tmp_path)
    tokens: dict[str, str] = {}
    for line in make_tokens:
        out = run(line, "", None).stdout
        name = shlex.split(line)[3]
        found = re.search(r"^token:\s+(\S+)$", out, re.M)
        assert found is not None, out
        tokens[name] = found.group(1)
    assert sorted(tokens) == ["acme-ci", "globex-ci", "ops"]
    (shown,) = blocks("text")
    made = (tmp_path / "tokens").read_text().splitlines()
    assert len(made) == len(lines_of(shown)), made
    for want, got in zip(lines_of(shown), made, strict=True):
        pattern = re.escape(want).replace(re.escape("<64 hex digits>"), "[0-9a-f]{64}")
        assert re.fullmatch(pattern, got), (want, got)
    ops, acme_token, globex_token = tokens["ops"], tokens["acme-ci"], tokens["globex-ci"]

    cluster = cluster_factory(start=False, env={"TASKYARD_AUTH_TOKENS_FILE": str(tmp_path / "tokens")})
    cluster.start()
    procs.wait_ready(
        cluster.target, deadline=time.monotonic() + 45, alive=list(cluster.procs.values()), token=ops
    )
    target = cluster.target

    # A tenant's token is refused until the tenant exists.
    with Client(target, token=acme_token) as early, pytest.raises(TaskyardError) as unknown:
        early.submit("add", 1, 1)
    assert (unknown.value.code, unknown.value.reason) == (grpc.StatusCode.PERMISSION_DENIED, "TENANT_UNKNOWN")

    said = {line: run(line, ops, target).stdout for line in create}
    listed = said["taskyard tenant list"]
    assert re.search(r"^acme\s", listed, re.M) and re.search(r"^globex\s", listed, re.M), listed
    with Client(target, token=ops) as operator:
        acme = operator.tenants.get("acme")
        assert (acme.max_concurrency, acme.weight) == (50, 2), acme
        assert acme.rate is not None and (acme.rate.units, acme.rate.period.total_seconds()) == (100, 1.0)
        assert operator.tenants.get("globex").description == "the globex team"
        default_task = operator.submit("add", 10, 10).id

    quoted = quoted_commands()
    assert quoted == ["taskyard tenant update acme --max-concurrency 100", "taskyard tenant get acme"], quoted
    for line in quoted:
        run(line, ops, target)
    with Client(target, token=acme_token) as own:
        # A tenant's token reads its own tenant (GetTenant), as the doc says.
        assert own.tenants.get("acme").max_concurrency == 100

    # The tenant's side, with acme's token.
    said = {line: run(line, acme_token, target).stdout for line in as_acme}
    submitted = said["taskyard task submit add 2 3 --wait"]
    assert re.search(r"^result:\s+5$", submitted, re.M), submitted
    acme_task = re.search(r"^id:\s+(\S+)$", submitted, re.M)
    assert acme_task is not None, submitted
    with Client(target, token=globex_token) as globex:
        globex_task = globex.submit("add", 3, 4).id
    for listing in (said["taskyard task list"], run(acting[0], ops, target).stdout):
        assert acme_task.group(1) in listing, listing
        assert globex_task not in listing and default_task not in listing, listing

    # The Python block, as acme, globex and the operator.
    for env, token in (("ACME_TOKEN", acme_token), ("GLOBEX_TOKEN", globex_token), ("OPS_TOKEN", ops)):
        monkeypatch.setenv(env, token)
    (python,) = blocks("python")
    capsys.readouterr()
    exec(python.replace(DOC_TARGET, target), {})
    assert capsys.readouterr().out.splitlines() == ["5", "NOT_FOUND", "acme", "['acme', 'globex']"]

    # Transactional enqueue into acme.
    (sql,) = blocks("sql")
    task_id = asyncio.run(_fetchval(cluster.database_url, sql.strip().rstrip(";")))
    with Client(target, token=acme_token) as own:
        assert own.wait(str(task_id), timeout=30).result == 5
    with Client(target, token=globex_token) as other, pytest.raises(TaskyardError) as hidden:
        other.get(str(task_id))
    assert hidden.value.code == grpc.StatusCode.NOT_FOUND

    # Suspending globex refuses its submissions, keeps its reads; resuming takes them again.
    run(suspend[0], ops, target)
    with Client(target, token=globex_token) as globex:
        assert globex.get(globex_task).tenant == "globex"
        with pytest.raises(TaskyardError) as refused:
            globex.submit("add", 5, 5)
        assert (refused.value.code, refused.value.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "TENANT_SUSPENDED",
        )
        run(resume[0], ops, target)
        resumed = wait_until(lambda: _submitted(globex), 10, "globex's submissions taken again")
        assert globex.wait(resumed, timeout=30).result == 12


async def _fetchval(database_url: str, statement: str) -> Any:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetchval(statement)
    finally:
        await conn.close()


def _submitted(client: Client) -> str | None:
    try:
        return client.submit("add", 6, 6).id
    except TaskyardError as exc:
        if exc.reason != "TENANT_SUSPENDED":
            raise
        return None
