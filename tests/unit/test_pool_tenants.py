"""A pool serves every tenant, or the tenants it lists: TASKYARD_POOL_TENANTS or
`taskyard serve worker-pool --serve-tenant NAME` / `taskyard queue start --serve-tenant NAME`
(repeatable, "default" the default tenant), said in its registration, its survey
replies and its announcements."""

from __future__ import annotations

from typing import Any, cast

import pytest
from click.testing import CliRunner

from taskyard.cli import main, queue_start, serve
from taskyard.core.config import Settings
from taskyard.worker_pool.links import SchedulerLink
from taskyard.worker_pool.state import Outbox, PoolState


class _Workers:
    def held_refs(self) -> list[Any]:
        return []

    def free_slots(self) -> int:
        return 0

    def worker_pids(self) -> list[int]:
        return []


def _link(settings: Settings) -> SchedulerLink:
    return SchedulerLink(settings, PoolState(settings), cast(Any, _Workers()), Outbox())


def test_a_pool_says_which_tenants_it_serves() -> None:
    link = _link(Settings(pool_tenants=("acme", "default")))
    assert list(link.survey_reply().tenants) == ["acme", ""]
    assert list(link.announcement().tenants) == ["acme", ""]


def test_a_pool_that_lists_none_serves_every_tenant() -> None:
    link = _link(Settings())
    assert list(link.survey_reply().tenants) == []
    assert list(link.announcement().tenants) == []


def test_the_command_lines_tenants_reach_the_pools_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    execs: list[tuple[str, dict[str, str]]] = []
    monkeypatch.setattr(serve, "exec_service", lambda name, env: execs.append((name, dict(env))))
    monkeypatch.setattr(queue_start, "exec_service", lambda name, env: execs.append((name, dict(env))))
    monkeypatch.setenv("TASKYARD_POOL_TENANTS", "other")
    runner = CliRunner()
    # docs/cli.md's line, as written.
    line = "taskyard serve worker-pool --serve-tenant acme --serve-tenant default --tasks taskyard.examples"
    result = runner.invoke(serve.serve_command, line.split()[2:])
    assert result.exit_code == 0, result.output
    result = runner.invoke(queue_start.queue_start_command, ["--serve-tenant", "beta"])
    assert result.exit_code == 0, result.output
    assert [(name, env["TASKYARD_POOL_TENANTS"]) for name, env in execs] == [
        ("worker-pool", "acme,default"),
        ("worker-pool", "beta"),
    ]
    assert Settings.from_env(execs[0][1]).pool_tenants == ("acme", "default")


def test_a_bad_tenant_name_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    execs: list[str] = []
    monkeypatch.setattr(serve, "exec_service", lambda name, env: execs.append(name))
    result = CliRunner().invoke(serve.serve_command, ["worker-pool", "--serve-tenant", "Acme/x"])
    assert result.exit_code == 2
    assert "'Acme/x': a tenant's name must be 1 to 64 characters of [a-z0-9-]" in result.output
    assert "'default' for the default tenant" in result.output
    result = CliRunner().invoke(serve.serve_command, ["gateway", "--serve-tenant", "acme"])
    assert result.exit_code == 2 and "--serve-tenant only apply to worker-pool" in result.output
    assert execs == []


def test_the_pools_tenants_are_apart_from_acting_as_a_tenant(monkeypatch: pytest.MonkeyPatch) -> None:
    # --tenant has an operator token act as a tenant anywhere on the line; which
    # tenants a pool serves is --serve-tenant, so the two never take each other's value.
    execs: list[dict[str, str]] = []
    monkeypatch.setattr(serve, "exec_service", lambda name, env: execs.append(dict(env)))
    monkeypatch.setattr(queue_start, "exec_service", lambda name, env: execs.append(dict(env)))
    monkeypatch.delenv("TASKYARD_POOL_TENANTS", raising=False)
    runner = CliRunner()
    line = ["--tenant", "acme", "serve", "worker-pool", "--serve-tenant", "beta"]
    assert runner.invoke(main.cli, line).exit_code == 0
    line = ["--tenant", "acme", "queue", "start", "--serve-tenant", "gamma"]
    assert runner.invoke(main.cli, line).exit_code == 0
    assert [env["TASKYARD_POOL_TENANTS"] for env in execs] == ["beta", "gamma"]
    refused = runner.invoke(main.cli, ["serve", "worker-pool", "--tenant", "beta"])
    assert refused.exit_code == 2 and "--tenant" in refused.output and execs[2:] == []
