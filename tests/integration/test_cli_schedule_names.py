"""``taskyard schedule ...`` addresses a schedule by its name or its id, and shows its interval as written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from taskyard.cli.main import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def fields(result: Result) -> dict[str, str]:
    assert result.exit_code == 0, result.output
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in result.stdout.splitlines())}


def test_name_or_id_reach_the_same_schedule(cluster: Any) -> None:
    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["schedule", "--target", cluster.target, *args])

    created = run("create", "nightly", "add", "1", "2", "--every", "90s", "-o", "json")
    assert created.exit_code == 0, created.output
    ident = json.loads(created.stdout)["schedule"]["id"]

    assert fields(run("pause", "nightly"))["paused"] == "yes"
    by_id = fields(run("get", ident))
    assert by_id["name"] == "nightly" and by_id["paused"] == "yes" and by_id["when"] == "every 1m30s (UTC)"
    assert fields(run("resume", ident))["paused"] == "no"
    fired = fields(run("trigger", "nightly"))
    assert fired["schedule"] == "nightly" and fired["times_run"] == "1" and fired["schedule_id"] == ident
    listed = run("list").stdout.splitlines()
    assert listed[0].split()[:4] == ["NAME", "ID", "TASK", "WHEN"]
    assert listed[1].split()[:5] == ["nightly", ident, "add", "every", "1m30s"]

    assert run("delete", ident, "--yes").stdout == f"deleted {ident}\n"
    gone = run("get", "nightly")
    assert gone.exit_code == 1 and gone.stderr.startswith("error: NOT_FOUND"), gone.stderr
