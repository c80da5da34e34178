"""Redrive, end to end through real services (gateway, scheduler, store on PostgreSQL,
real worker processes): the issue's "Redrive test".

Tasks fail with one of three causes (support/failing_tasks.py: not retried, so they
are dead letters at once), making three fingerprint groups. A dry run counts one group
exactly and changes nothing; bad input (an empty filter, a rate of 0 or below, an
unknown group, a task that is not a dead letter) is refused and changes nothing; a
redrive at 200/s of 1,000 tasks spans at least 4.5 s on the store's own item times;
each redriven attempt links to its failure; the redrive is its own audit record. With
the store and then the leading scheduler SIGKILLed mid-redrive, no task is lost and none
is redriven twice: each item REQUEUED once, each task's attempt its failed attempt + 1,
each task run exactly once more (the journal).

The quick size runs 1,100 failures; the issue's 10,000 runs as a slow test.
"""

from __future__ import annotations

import collections
import functools
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from support.cluster import Cluster
from support.ports import BLOCK, free_port_block
from support.waiting import wait_until

from taskyard.client import (
    DeadLetterReason,
    FailureFilter,
    RedriveOutcome,
    RedriveState,
    TaskRequest,
    TaskyardError,
)
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(300)]

TYPES = {"timeout": "TimeoutError", "declined": "ValueError", "missing": "LookupError"}
MODULES = ("taskyard.examples", "support.failing_tasks")
SCHEDULER_HOSTS = ("127.0.0.2", "127.0.0.3")


@pytest.fixture
def fixed(tmp_path: Path) -> Path:
    """Created by a test when "the downstream is fixed": charge() succeeds from then on."""
    return tmp_path / "fixed"


def charge_env(journal: Path, fixed: Path) -> dict[str, str]:
    return {"TASKYARD_TEST_JOURNAL": str(journal), "TASKYARD_TEST_FIXED": str(fixed)}


def submit_failures(client: Any, sizes: dict[str, int]) -> dict[str, list[str]]:
    """Submit ``sizes[kind]`` charge tasks of each kind; their ids by kind."""
    requests = [(kind, n) for kind, count in sizes.items() for n in range(count)]
    ids: dict[str, list[str]] = collections.defaultdict(list)
    for start in range(0, len(requests), 1000):
        chunk = requests[start : start + 1000]
        done = client.submit_many([TaskRequest(name="charge", args=[kind, n]) for kind, n in chunk])
        for (kind, _), submitted in zip(chunk, done, strict=True):
            ids[kind].append(submitted.id)
    return ids


def groups_by_kind(client: Any, total: int, timeout: float = 120) -> dict[str, Any]:
    """The failure groups once every one of ``total`` tasks is a dead letter, by kind."""

    def all_dead() -> list[Any] | None:
        groups = list(client.failures.groups().items)
        return groups if sum(g.count for g in groups) == total else None

    groups = wait_until(all_dead, timeout, f"{total} dead letters")
    by_type = {g.type: g for g in groups}
    assert len(groups) == 3 and set(by_type) == set(TYPES.values()), groups
    return {kind: by_type[name] for kind, name in TYPES.items()}


def runs(journal: Path) -> collections.Counter[str]:
    """Attempts that ran, per task key ("timeout-7")."""
    return collections.Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("charge ")
    )


def all_items(client: Any, redrive_id: str) -> list[Any]:
    items: list[Any] = []
    token = ""
    while True:
        page = client.failures.redrive_items(redrive_id, page_size=1000, page_token=token)
        items.extend(page.items)
        token = page.next_page_token
        if not token:
            return items


def finished(client: Any, redrive_id: str, timeout: float) -> Any:
    return wait_until(
        lambda: (r := client.failures.get_redrive(redrive_id)).state == RedriveState.DONE and r,
        timeout,
        lambda: f"redrive {redrive_id} done: {client.failures.get_redrive(redrive_id)}",
    )


def refusal(call: Callable[[], Any]) -> TaskyardError:
    with pytest.raises(TaskyardError) as info:
        call()
    return info.value


def check_links(
    channel: grpc.Channel, task_ids: list[str], redrive_id: str, *, unstarted_reruns: bool = False
) -> None:
    """Each task: redriven once by this redrive, from attempt 1 to attempt 2 (which succeeded),
    its failed attempt 1 linked to the redrive and to its group. With ``unstarted_reruns``
    (a store or a leader killed mid-redrive), attempt 2 may have been leased and never sent: its
    lease lapsed and the task ran again as a new attempt that spent no retry."""
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    for task_id in task_ids:
        task = tasks.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=15).task
        reruns = task.uncharged_attempts if unstarted_reruns else 0
        assert task.state == task_pb2.TASK_STATE_SUCCESS and task.attempt == 2 + reruns, task
        assert (task.redrive_id, task.redriven_from_attempt) == (redrive_id, 1), task
        assert task.dead_letter_reason == task_pb2.DEAD_LETTER_REASON_UNSPECIFIED
        (failure,) = [f for f in task.failures if f.attempt == 1]
        assert failure.redrive_id == redrive_id and failure.group_id, failure


@pytest.mark.parametrize(
    "sizes",
    [
        pytest.param({"timeout": 1000, "declined": 60, "missing": 40}, id="1100"),
        pytest.param(
            {"timeout": 1000, "declined": 4500, "missing": 4500}, id="10000", marks=pytest.mark.slow
        ),
    ],
)
def test_redrive(
    cluster_factory: Callable[..., Cluster], journal: Path, fixed: Path, sizes: dict[str, int]
) -> None:
    cluster = cluster_factory(task_modules=MODULES, concurrency=16, env=charge_env(journal, fixed))
    client: Any = cluster.client()
    ids = submit_failures(client, sizes)
    groups = groups_by_kind(client, sum(sizes.values()))
    for kind, group in groups.items():
        assert (group.count, group.name, group.queue) == (sizes[kind], "charge", "default"), group
        # Numbers and quoted values masked: one group whatever the task's own values.
        assert ("<n>" in group.message or "'<s>'" in group.message) and group.frame.endswith("charge"), group
    declined = FailureFilter(group_id=groups["declined"].group_id)
    (one,) = client.failures.list(declined, page_size=1).items
    assert one.reason == DeadLetterReason.NOT_RETRYABLE and one.type == "ValueError"

    # A dry run counts one group exactly, with a sample of it, and changes nothing.
    dry = client.failures.redrive(declined, rate=50, dry_run=True)
    assert dry.redrive is None and dry.matched == sizes["declined"]
    assert 0 < len(dry.sample) <= 10 and {d.group_id for d in dry.sample} == {groups["declined"].group_id}

    # Bad input: a clear error each, and nothing changed.
    dead = ids["declined"][0]
    succeeded = client.submit("add", 2, 3).id
    assert client.wait(succeeded, timeout=60).state.name == "SUCCESS"
    empty = refusal(lambda: client.failures.redrive(FailureFilter(), rate=50))
    assert empty.code == grpc.StatusCode.INVALID_ARGUMENT and [v.field for v in empty.violations] == [
        "filter"
    ]
    for rate in (0.0, -1.0):
        bad_rate = refusal(functools.partial(client.failures.redrive, declined, rate=rate))
        assert bad_rate.code == grpc.StatusCode.INVALID_ARGUMENT, bad_rate
        assert [v.field for v in bad_rate.violations] == ["rate"]
    unknown = refusal(lambda: client.failures.redrive(FailureFilter(group_id="0123456789abcdef"), rate=50))
    assert unknown.code == grpc.StatusCode.NOT_FOUND, unknown
    alive = refusal(lambda: client.failures.redrive(FailureFilter(task_ids=[dead, succeeded]), rate=50))
    assert alive.code == grpc.StatusCode.FAILED_PRECONDITION and succeeded in alive.message, alive
    assert client.failures.list_redrives().items == ()
    assert groups_by_kind(client, sum(sizes.values()), timeout=5) == groups
    assert client.get(dead).state.name == "FAILURE"

    # The downstream is fixed: redrive the timeouts at 200/s.
    fixed.touch()
    timeouts = FailureFilter(group_id=groups["timeout"].group_id)
    started = client.failures.redrive(timeouts, rate=200, note="payments API fixed")
    redrive = started.redrive
    assert redrive is not None and started.matched == redrive.matched == sizes["timeout"]
    assert redrive.state == RedriveState.RUNNING and redrive.created_by == "dev"
    done = finished(client, redrive.id, 120)
    assert (done.requeued, done.skipped, done.finished_at is not None) == (sizes["timeout"], 0, True)

    items = all_items(client, redrive.id)
    assert len(items) == sizes["timeout"] and {i.task_id for i in items} == set(ids["timeout"])
    assert {i.outcome for i in items} == {RedriveOutcome.REQUEUED}
    assert all(i.new_attempt == i.failed_attempt + 1 == 2 for i in items)
    times = sorted(i.at for i in items)
    span = (times[-1] - times[0]).total_seconds()
    print(f"\n{len(items)} tasks redriven at 200/s over {span:.2f} s (store's item times)")
    assert span >= 4.5, span
    for task_id in ids["timeout"]:
        assert client.wait(task_id, timeout=60).state.name == "SUCCESS", task_id
    check_links(cluster.channel(), ids["timeout"][:50], redrive.id)

    # The audit: who, when, which filter, what became of each.
    (audit,) = client.failures.list_redrives().items
    assert (audit.id, audit.created_by, audit.note, audit.filter) == (
        redrive.id,
        "dev",
        "payments API fixed",
        timeouts,
    )
    assert audit.created_at is not None and audit.state == RedriveState.DONE
    ran = runs(journal)
    assert all(ran[f"timeout-{n}"] == 2 for n in range(sizes["timeout"])), "a timeout task not run twice"
    assert all(ran[f"declined-{n}"] == 1 for n in range(sizes["declined"])), "a declined task redriven"


def two_schedulers(cluster_factory: Callable[..., Cluster], env: dict[str, str]) -> Cluster:
    """A cluster over tcp whose first scheduler leads and whose second stands by."""
    start = free_port_block(BLOCK + 1)
    cluster = cluster_factory(
        start=False,
        transport="tcp",
        base_port=start + 1,
        discovery_port=start,
        scheduler_hosts=SCHEDULER_HOSTS,
        concurrency=16,
        task_modules=MODULES,
        env=env,
    )
    cluster.start_service("result-store")
    cluster.start_instances("scheduler", [{"TASKYARD_BIND_HOST": SCHEDULER_HOSTS[0]}])
    cluster.start_instances("scheduler", [{"TASKYARD_BIND_HOST": SCHEDULER_HOSTS[1]}], wait_log="standing by")
    for service in ("worker-pool", "gateway"):
        cluster.start_service(service)
    cluster.wait_ready()
    return cluster


def progress(client: Any, redrive_id: str) -> int:
    """Items taken so far (0 while the store cannot answer)."""
    try:
        r = client.failures.get_redrive(redrive_id)
    except TaskyardError:
        return 0
    return int(r.requeued + r.skipped)


def test_a_redrive_survives_a_killed_store_and_a_killed_leader(
    cluster_factory: Callable[..., Cluster], journal: Path, fixed: Path
) -> None:
    cluster = two_schedulers(cluster_factory, charge_env(journal, fixed))
    client: Any = cluster.client()
    count = 1000
    ids = submit_failures(client, {"timeout": count, "declined": 3, "missing": 3})
    groups = groups_by_kind(client, count + 6)
    fixed.touch()
    started = client.failures.redrive(FailureFilter(group_id=groups["timeout"].group_id), rate=100)
    redrive_id = started.redrive.id

    wait_until(lambda: progress(client, redrive_id) >= 150, 60, "150 tasks redriven")
    cluster.kill("result-store", signal.SIGKILL)
    cluster.start_service("result-store")
    wait_until(
        lambda: progress(client, redrive_id) >= 450, 60, lambda: f"450 redriven\n{cluster.logs_tail()}"
    )
    assert progress(client, redrive_id) < count, "the redrive ended before the leader was killed"
    cluster.kill("scheduler", signal.SIGKILL)
    wait_until(
        lambda: cluster.query("SELECT term FROM scheduler_leader")[0]["term"] >= 2,
        30,
        lambda: f"a new leader\n{cluster.logs_tail()}",
    )
    done = finished(client, redrive_id, 120)
    assert (done.requeued, done.skipped) == (count, 0), done

    items = all_items(client, redrive_id)
    assert sorted(i.task_id for i in items) == sorted(ids["timeout"])  # each once
    assert {i.outcome for i in items} == {RedriveOutcome.REQUEUED}
    assert all(i.new_attempt == i.failed_attempt + 1 == 2 for i in items)
    for task_id in ids["timeout"]:
        assert client.wait(task_id, timeout=90).state.name == "SUCCESS", task_id
    check_links(cluster.channel(), ids["timeout"], redrive_id, unstarted_reruns=True)
    ran = runs(journal)
    twice = [k for k in ran if k.startswith("timeout-") and ran[k] != 2]
    assert not twice, f"not run exactly once more: {twice[:10]}"


def test_a_redriven_task_says_its_redrive(
    cluster_factory: Callable[..., Cluster], journal: Path, fixed: Path
) -> None:
    cluster = cluster_factory(task_modules=MODULES, env=charge_env(journal, fixed))
    client: Any = cluster.client()
    ids = submit_failures(client, {"timeout": 3, "declined": 1, "missing": 1})
    groups = groups_by_kind(client, 5)
    fixed.touch()
    started = client.failures.redrive(FailureFilter(group_id=groups["timeout"].group_id), rate=100)
    finished(client, started.redrive.id, 60)
    for task_id in ids["timeout"]:
        task = client.wait(task_id, timeout=60)
        assert task.state.name == "SUCCESS", task
        assert (task.redrive_id, task.redriven_from_attempt) == (started.redrive.id, 1), task
