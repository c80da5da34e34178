"""docs/flow-control.md's examples, run as written against a real cluster: the Python
block (with the cluster's client as ``client``), each CLI line and each grpcurl line
(the documented localhost:50051 replaced by the cluster's gateway). Each must make the
two limits, submit add(2, 3) using both with its customer as fairness key, and weight
that customer."""

from __future__ import annotations

import datetime
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import grpcurl

from taskyard.client import KeyWeight

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "flow-control.md"
DOC_TARGET = "localhost:50051"


def block(heading: str, language: str) -> str:
    """The first ``language`` code block after the paragraph that starts with ``heading``."""
    section = DOC.read_text().split("\n## One example per client\n", 1)[1].split("\n## ", 1)[0]
    part = section.split(f"\n{heading}", 1)[1]
    found = re.search(rf"```{language}\n(.*?)```", part, re.S)
    assert found is not None, f"docs/flow-control.md: no {language} block after {heading}"
    return found.group(1)


def made_as_documented(client: Any) -> None:
    limits = {limit.name: limit for limit in client.limits}
    assert sorted(limits) == ["openai", "per-customer"], limits
    assert limits["per-customer"].concurrency == 3 and limits["per-customer"].per_key
    rate = limits["openai"].rate
    assert (rate.units, rate.period, rate.burst) == (500, datetime.timedelta(seconds=1), 50)
    assert not limits["openai"].per_key
    assert client.limits.weights() == [KeyWeight(key="customer:42", weight=3)]


def submitted_as_documented(client: Any) -> None:
    (task,) = list(client.iter_tasks(name="add"))
    assert task.fairness_key == "customer:42"
    assert {(u.limit, u.key) for u in task.limits} == {("per-customer", "customer:42"), ("openai", "")}
    assert client.wait(task.id, timeout=60).result == 5


def test_the_python_example_runs_as_written(cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with cluster.client() as client:
        exec(block("**Python**", "python"), {"client": client})
        printed = capsys.readouterr().out.splitlines()
        assert printed[0] in {
            "RATE_LIMITED",
            "CONCURRENCY_FULL",
            "FAIR_SHARE",
            "DISPATCHING",
            "RUNNING",
            "FINAL",
        }
        assert printed[1] == "5", printed
        made_as_documented(client)
        submitted_as_documented(client)


def test_the_cli_example_runs_as_written(cluster: Any) -> None:
    lines = [line for line in block("**CLI**", "sh").splitlines() if line.strip()]
    assert len(lines) == 4, lines
    for line in lines:
        args = shlex.split(line)
        assert args[0] == "taskyard", line
        proc = subprocess.run(
            [sys.executable, "-m", "taskyard.cli", *args[1:], "--target", cluster.target],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, f"{line}\n{proc.stdout}{proc.stderr}"
    with cluster.client() as client:
        made_as_documented(client)
        submitted_as_documented(client)


def test_the_grpcurl_example_runs_as_written(cluster: Any) -> None:
    lines = [line for line in block("**grpcurl**", "sh").splitlines() if line.strip()]
    assert len(lines) == 4, lines
    replies = []
    for line in lines:
        args = shlex.split(line)
        assert args[0] == "grpcurl" and DOC_TARGET in args, line
        proc = grpcurl.run_raw([cluster.target if a == DOC_TARGET else a for a in args[1:]])
        replies.append(json.loads(proc.stdout))
    assert replies[2]["task"]["fairness_key"] == "customer:42", replies[2]
    with cluster.client() as client:
        made_as_documented(client)
        submitted_as_documented(client)
