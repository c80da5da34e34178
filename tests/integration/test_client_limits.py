"""The Python client's flow control against a real cluster: ``client.limits``, ``limits=`` and
``fairness_key=`` on a submission, their errors, and the limits a task declares in code."""

from __future__ import annotations

import asyncio
import datetime
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from support.waiting import wait_until

from taskyard.client import AsyncClient, KeyWeight, LimitUse, Rate, TaskRequest, TaskState, TaskyardError

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_limits_are_created_read_listed_updated_and_deleted(cluster: Any) -> None:
    with cluster.client() as client:
        openai = client.limits.create("openai", rate=500, period=datetime.timedelta(seconds=1), burst=50)
        assert openai.rate == Rate(units=500, period=datetime.timedelta(seconds=1), burst=50)
        assert openai.concurrency is None and openai.created_at is not None
        per_customer = client.limits.create(
            "per-customer", concurrency=3, per_key=True, description="3 at once per customer"
        )
        assert (per_customer.concurrency, per_customer.per_key) == (3, True)

        got = client.limits.get("per-customer")
        assert (got.name, got.description, got.task_name) == ("per-customer", "3 at once per customer", "")
        assert [x.name for x in client.limits] == ["openai", "per-customer"]
        first = client.limits.list(page_size=1)
        assert [x.name for x in first.limits] == ["openai"] and first.next_page_token

        updated = client.limits.update("openai", rate=800, period=1.0)
        assert updated.rate is not None and (updated.rate.units, updated.rate.burst) == (800, 0)
        assert client.limits.delete("openai") == 0
        with pytest.raises(TaskyardError) as gone:
            client.limits.get("openai")
        assert gone.value.code == grpc.StatusCode.NOT_FOUND


def test_the_servers_refusals_come_back_as_the_clients_errors(cluster: Any) -> None:
    with cluster.client() as client:
        client.limits.create("api", concurrency=2)
        with pytest.raises(TaskyardError) as taken:
            client.limits.create("api", concurrency=2)
        assert taken.value.code == grpc.StatusCode.ALREADY_EXISTS
        with pytest.raises(TaskyardError) as bad:
            client.limits.create("zero", rate=0)
        assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in bad.value.violations] == ["limit.rate.units"]
        with pytest.raises(TaskyardError) as missing:
            client.limits.update("nothing-here", concurrency=1)
        assert missing.value.code == grpc.StatusCode.NOT_FOUND
        with pytest.raises(TaskyardError) as unknown:
            client.submit("add", 1, 2, limits={"no-such-limit": "k"})
        assert unknown.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [(v.field, v.reason) for v in unknown.value.violations] == [
            ("task.limits[0].limit", "UNKNOWN_LIMIT")
        ]
        with pytest.raises(TaskyardError) as too_many:
            client.submit("add", 1, 2, limits=[LimitUse(limit="api", units=3)])
        assert too_many.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in too_many.value.violations] == ["task.limits[0].units"]
        assert client.list().tasks == ()


def test_a_task_keeps_its_limits_and_fairness_key(cluster: Any) -> None:
    with cluster.client() as client:
        client.limits.create("api", concurrency=2, per_key=True)
        client.limits.create("tokens", rate=1000, period=60.0)
        task = client.submit(
            "add",
            2,
            3,
            limits=[LimitUse(limit="api", key="customer:42"), LimitUse(limit="tokens", units=5)],
            fairness_key="customer:42",
        )
        done = client.wait(task.id, timeout=60)
        assert done.result == 5
        # Units as admission counts them: the 0 sent (the default) reads as 1.
        assert done.limits == (
            LimitUse(limit="api", key="customer:42", units=1),
            LimitUse(limit="tokens", units=5),
        )
        assert done.fairness_key == "customer:42"
        (batch,) = client.submit_many([TaskRequest(name="add", args=[1, 1], limits={"api": "customer:7"})])
        assert client.get(batch.id).limits == (LimitUse(limit="api", key="customer:7", units=1),)
        # No limits: nothing of flow control on the task.
        assert client.get(client.submit("add", 1, 1).id).limits == ()


def test_weights_are_set_listed_and_removed(cluster: Any) -> None:
    async def run() -> None:
        async with AsyncClient(cluster.target) as client:
            assert await client.limits.set_weight("tenant-a", 3) == KeyWeight(key="tenant-a", weight=3)
            await client.limits.set_weight("tenant-b", 1)
            assert await client.limits.weights() == [
                KeyWeight(key="tenant-a", weight=3),
                KeyWeight(key="tenant-b", weight=1),
            ]
            await client.limits.set_weight("tenant-a", 0)
            assert [w.key for w in await client.limits.weights()] == ["tenant-b"]
            assert [x.name async for x in client.limits] == []

    asyncio.run(run())


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.declared_limits"))
def test_a_pool_declares_the_limits_its_tasks_declare(cluster: Any) -> None:
    with cluster.client() as client:
        # The pool declares them once registered: its events say when.
        _declared(client, "send_invoice.rate", "send_invoice.concurrency")
        rate = client.limits.get("send_invoice.rate")
        assert rate.rate == Rate(units=100, period=datetime.timedelta(seconds=1), burst=20)
        assert (rate.task_name, rate.key_argument, rate.per_key) == ("send_invoice", "customer_id", True)
        concurrency = client.limits.get("send_invoice.concurrency")
        assert (concurrency.concurrency, concurrency.task_name) == (3, "send_invoice")
        task = client.submit("send_invoice", 7, customer_id="c:1")
        done = client.wait(task.id, timeout=60)
        assert done.result == 7


def _declared(client: Any, *names: str) -> None:
    """Once the pool's declaration of ``names`` is in the store (its events say so)."""
    watch = client.events.watch(kinds=["limit"], start="oldest")
    try:
        seen: set[str] = set()
        for event in watch:
            if event.type == "limit.declared":
                seen.add(event.attributes.get("limit", ""))
            if set(names) <= seen:
                return
    finally:
        watch.close()


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.declared_limits"))
def test_a_declared_concurrency_holds_a_key_and_explain_names_the_gate(cluster: Any) -> None:
    with cluster.client() as client:
        _declared(client, "settle.concurrency")
        holder = client.submit("settle", 300, account="a")
        wait_until(lambda: client.get(holder.id).state == TaskState.RUNNING, 60, "the first settle runs")
        held = client.submit("settle", 0, account="a")
        why = wait_until(
            lambda: (e := client.explain(held.id)).reason == "CONCURRENCY_FULL" and e,
            30,
            "the second settle of account a is held by its concurrency",
        )
        assert why.gate is not None
        assert (why.gate.limit, why.gate.key, why.gate.holder_ids) == (
            "settle.concurrency",
            "a",
            (holder.id,),
        )
        shown = subprocess.run(
            [sys.executable, "-m", "taskyard.cli", "task", "explain", held.id, "--target", cluster.target],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        rows = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in shown.splitlines())}
        assert (rows["reason"], rows["limit"], rows["key"], rows["held_by"]) == (
            "CONCURRENCY_FULL",
            "settle.concurrency",
            "a",
            holder.id,
        )
        # Another key is not held behind it.
        other = client.submit("settle", 0, account="b")
        assert client.wait(other.id, timeout=60).state == TaskState.SUCCESS
        assert client.get(held.id).state == TaskState.QUEUED
        client.cancel(holder.id, wait=30)
        assert client.wait(held.id, timeout=60).state == TaskState.SUCCESS


def _documented(doc: str, section: str, index: int = 0) -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / doc).read_text()
    part = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    assert len(blocks) > index, f"docs/{doc}: no example {index} in {section}"
    return str(blocks[index])


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.declared_limits"))
def test_an_update_of_a_declared_limit_as_the_guide_writes_it_keeps_it_on_its_tasks(cluster: Any) -> None:
    with cluster.client() as client:
        _declared(client, "send_invoice.rate", "send_invoice.concurrency")
        exec(_documented("python-client.md", "Flow control", 1), {"client": client})
        rate = client.limits.get("send_invoice.rate")
        assert rate.rate == Rate(units=50, period=datetime.timedelta(seconds=1), burst=20)
        assert (rate.task_name, rate.key_argument, rate.per_key) == ("send_invoice", "customer_id", True)
        task = client.submit("send_invoice", 7, customer_id="c:1")
        assert LimitUse(limit="send_invoice.rate", key="c:1", units=1) in client.get(task.id).limits
        assert client.wait(task.id, timeout=60).result == 7


def test_the_python_client_guide_runs_as_written(cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with cluster.client() as client:
        exec(_documented("python-client.md", "Flow control"), {"client": client})
        printed = capsys.readouterr().out.splitlines()
        assert printed[0].endswith(" customer:42"), printed
        assert printed[1].startswith("3 "), printed
        assert {limit.name for limit in client.limits} == {"openai", "tokens"}
        assert client.limits.weights() == [KeyWeight(key="customer:42", weight=3)]
        assert client.limits.get("openai").rate == Rate(units=800, period=datetime.timedelta(seconds=1))
