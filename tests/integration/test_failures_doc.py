"""docs/failures.md's walkthrough, run as written against a real cluster: every ``taskyard``
line of its sh blocks, in order (the documented example ids replaced by the ones the
cluster made, and the cluster's gateway as target), then its Python block with the
cluster's client. Dead letters come from support/failing_tasks.py: three groups."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.cli.main import cli
from taskyard.client import TaskRequest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "failures.md"
# The ids the doc shows, each replaced by the one the cluster made.
DOC_GROUP = "3f9c0a1be2d47c65"
DOC_REDRIVE = "6f1b3c2e-8d4a-4b9e-a1c0-5e7d9f2b4a10"
DOC_PAUSED = "9a7d2e14-3b5c-4f60-8e21-c4d8b0a6f357"
SIZES = {"timeout": 20, "declined": 100, "missing": 5}


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def commands() -> list[str]:
    return [line for b in blocks("sh") for line in b.splitlines() if line.strip()]


def test_the_walkthrough_runs_as_written(cluster_factory: Callable[..., Cluster], tmp_path: Path) -> None:
    cluster = cluster_factory(
        task_modules=("taskyard.examples", "support.failing_tasks"),
        env={"TASKYARD_TEST_JOURNAL": str(tmp_path / "journal")},
    )
    client: Any = cluster.client()
    client.submit_many(
        [TaskRequest(name="charge", args=[kind, n]) for kind, count in SIZES.items() for n in range(count)]
    )
    groups = wait_until(
        lambda: (
            (g := client.failures.groups().items) and sum(x.count for x in g) == sum(SIZES.values()) and g
        ),
        60,
        "every charge task dead-lettered",
    )
    timeout_group = next(g.group_id for g in groups if g.type == "TimeoutError")
    ids = {DOC_GROUP: timeout_group}
    outputs: dict[str, Result] = {}
    for line in commands():
        for doc_id, real in ids.items():
            line = line.replace(doc_id, real)
        args = shlex.split(line)
        assert args[0] == "taskyard", line
        result = CliRunner().invoke(cli, [*args[1:], "--target", cluster.target])
        assert result.exit_code == 0, f"{line}\n{result.output}"
        outputs[line] = result
        made = re.search(r"^id:\s+(\S+)", result.stdout, re.M)
        if args[1] == "redrive" and args[2].startswith("--") and "--dry-run" not in args and made:
            # The first redrive started is the doc's DOC_REDRIVE, the second its DOC_PAUSED.
            ids[DOC_REDRIVE if DOC_REDRIVE not in ids else DOC_PAUSED] = made.group(1)

    said = {line.replace(ids[DOC_GROUP], DOC_GROUP): r.stdout for line, r in outputs.items()}
    said = {
        re.sub("|".join(map(re.escape, (ids[DOC_REDRIVE], ids[DOC_PAUSED]))), "ID", k): v
        for k, v in said.items()
    }
    assert timeout_group in said["taskyard failures groups"]
    assert said[f"taskyard failures list --group {DOC_GROUP}"].count("TimeoutError") == SIZES["timeout"]
    assert (
        f"{SIZES['timeout']} dead letters match"
        in said[f"taskyard redrive --group {DOC_GROUP} --rate 50 --dry-run"]
    )
    watched = said["taskyard redrive get ID --watch"].splitlines()
    assert watched[-1].endswith(
        f"done: {SIZES['timeout']}/{SIZES['timeout']} ({SIZES['timeout']} re-queued, 0 skipped)"
    )
    assert re.search(r"^state:\s+paused", said["taskyard redrive pause ID"], re.M)
    assert re.search(r"^state:\s+running", said["taskyard redrive resume ID"], re.M)
    assert re.search(r"^state:\s+cancelled", said["taskyard redrive cancel ID"], re.M)
    listed = said["taskyard redrive list"]
    assert ids[DOC_REDRIVE] in listed and ids[DOC_PAUSED] in listed and "dev" in listed
    assert said["taskyard redrive items ID"].count("requeued") == SIZES["timeout"]
    # Redriven while the downstream still fails, the timeouts are dead letters again: purged.
    assert said[f"taskyard failures purge --group {DOC_GROUP} --dry-run"].strip() == (
        f"would purge {SIZES['timeout']} dead letters"
    )
    assert (
        said[f"taskyard failures purge --group {DOC_GROUP} --yes"].strip()
        == f"purged {SIZES['timeout']} dead letters"
    )


def test_the_python_examples_run_as_written(
    cluster_factory: Callable[..., Cluster], capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/failures.md's Python block, then docs/python-client.md's (on another group)."""
    cluster = cluster_factory(task_modules=("taskyard.examples", "support.failing_tasks"))
    with cluster.client() as client:
        client.submit_many([TaskRequest(name="charge", args=["timeout", n]) for n in range(3)])
        # A group appears with its first dead letter; the example counts all three.
        wait_until(lambda: [g.count for g in client.failures.groups().items] == [3], 60, "three dead letters")
        (python,) = blocks("python")
        exec(python.replace("localhost:50051", cluster.target), {})
        printed = capsys.readouterr().out.splitlines()
        assert printed[0] == "3", printed
        assert printed[1] in {"RUNNING", "DONE"}, printed
        # Its redrive re-queued the three; they fail again: dead letters once more.
        wait_until(
            lambda: [g.count for g in client.failures.groups().items] == [3],
            60,
            "the three dead letters again",
        )
        client.submit_many([TaskRequest(name="charge", args=["missing", n]) for n in range(5)])
        wait_until(
            lambda: sorted(g.count for g in client.failures.groups().items) == [3, 5],
            60,
            "a second group of five",
        )
        guide = (DOC.parent / "python-client.md").read_text().split("\n## Dead letters and redrive\n", 1)[1]
        (example,) = re.findall(r"```python\n(.*?)```", guide.split("\n## ", 1)[0], re.S)
        exec(example, {"client": client})
        printed = capsys.readouterr().out.splitlines()
        assert printed[0].startswith("no customer "), printed  # the newest dead letter's own message
        assert printed[1] == "5" and int(printed[2]) <= 5, printed
