"""@task(rate_limit=..., concurrency=..., limit_key=...): limits declared with a task, checked
at import, and the declaration the pool sends the store for them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract, errors
from taskyard.core import limit_declarations as core_declarations
from taskyard.worker_pool import limit_declarations, registry, task


def test_a_rate_and_a_concurrency_keyed_by_an_argument() -> None:
    @task(name="flow_send", rate_limit="100/s", rate_burst=20, concurrency=3, limit_key="customer_id")
    def send(to: str, *, customer_id: str) -> None: ...

    try:
        tdef = registry.get("flow_send")
        assert tdef is not None and tdef.limits is not None
        rate, concurrency = tdef.limits.to_protos()
        assert (rate.name, rate.task_name, rate.key_argument, rate.per_key) == (
            "flow_send.rate",
            "flow_send",
            "customer_id",
            True,
        )
        assert (rate.rate.units, rate.rate.period.ToMilliseconds(), rate.rate.burst) == (100, 1000, 20)
        assert concurrency.name == "flow_send.concurrency" and concurrency.concurrency.max_units == 3
        assert concurrency.per_key and concurrency.key_argument == "customer_id"
    finally:
        registry.unregister("flow_send")


def test_without_a_key_one_bucket_for_all_and_no_limits_declare_nothing() -> None:
    @task(name="flow_global", rate_limit="10/min")
    async def a() -> None: ...

    @task(name="flow_none")
    def b() -> None: ...

    try:
        tdef = registry.get("flow_global")
        assert tdef is not None and tdef.limits is not None
        (rate,) = tdef.limits.to_protos()
        assert (rate.name, rate.per_key, rate.key_argument) == ("flow_global.rate", False, "")
        assert rate.rate.period.ToMilliseconds() == 60_000 and rate.rate.burst == 0
        none = registry.get("flow_none")
        assert none is not None and none.limits is None
    finally:
        registry.unregister("flow_global")
        registry.unregister("flow_none")


def test_a_key_argument_may_come_through_kwargs() -> None:
    @task(name="flow_kwargs", concurrency=2, limit_key="tenant")
    def c(**kwargs: Any) -> None: ...

    try:
        tdef = registry.get("flow_kwargs")
        assert tdef is not None and tdef.limits is not None
        assert tdef.limits.key_argument == "tenant"
    finally:
        registry.unregister("flow_kwargs")


@pytest.mark.parametrize(
    ("name", "options", "error", "text"),
    [
        ("flow_bad", {"rate_limit": "100 per second"}, ValueError, "a rate is units/period"),
        ("flow_bad", {"rate_limit": "0/s"}, ValueError, "rate.units must be 1 to"),
        ("flow_bad", {"rate_limit": "5/3d"}, ValueError, "rate.period must be 1 ms to 1 day"),
        ("flow_bad", {"rate_limit": 100}, TypeError, "a rate such as '100/s'"),
        ("flow_bad", {"concurrency": 0}, ValueError, "concurrency must be at least 1"),
        ("flow_bad", {"concurrency": 2.5}, TypeError, "a whole number"),
        ("flow_bad", {"concurrency": True}, TypeError, "a whole number"),
        ("flow_bad", {"limit_key": "customer_id"}, ValueError, "applies with rate_limit=, concurrency= or"),
        ("flow_bad", {"concurrency": 2, "rate_burst": 4}, ValueError, "rate_burst= applies with rate_limit="),
        ("flow_bad", {"concurrency": 2, "limit_key": "nope"}, ValueError, "no keyword argument of that name"),
        ("flow_bad", {"concurrency": 2, "limit_key": "a-b"}, ValueError, "names a keyword argument"),
        ("send mail", {"rate_limit": "1/s"}, ValueError, "declares a limit the store would refuse: name"),
        ("n" * 120, {"concurrency": 1}, ValueError, "declares a limit the store would refuse: name"),
        ("tenant", {"concurrency": 1}, ValueError, "must not start with 'tenant.'"),
    ],
)
def test_bad_declarations_fail_at_import(
    name: str, options: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):

        @task(name=name, **options)
        def bad(*, customer_id: str = "") -> None: ...

    assert registry.get(name) is None


class Store:
    """The store's side of STORE_LIMIT_CHANGE: fails ``failures`` times, then answers."""

    def __init__(self, *failures: errors.TaskyardError) -> None:
        self.failures = list(failures)
        self.requests: list[flow_pb2.ChangeLimitRequest] = []

    async def call(self, method: Any, request: Any, **_: Any) -> Any:
        assert method is contract.STORE_LIMIT_CHANGE
        self.requests.append(request)
        if self.failures:
            raise self.failures.pop(0)
        return flow_pb2.ChangeLimitReply(version=1)


def test_the_pool_declares_every_limit_in_one_change_and_retries_an_absent_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @task(name="flow_a", rate_limit="5/2s", limit_key="k")
    def a(*, k: str) -> None: ...

    @task(name="flow_b", concurrency=4)
    def b() -> None: ...

    monkeypatch.setattr(core_declarations, "RETRY_PAUSE", (0.001, 0.001))
    store = Store(errors.unavailable("no store yet"))
    try:
        applied = asyncio.run(limit_declarations.declare_registered(store, ["flow_a", "flow_b", "flow_none"]))
    finally:
        registry.unregister("flow_a")
        registry.unregister("flow_b")
    assert applied == 2
    assert len(store.requests) == 2
    sent = store.requests[-1]
    assert sent.op == flow_pb2.LIMIT_OP_DECLARE
    assert [(x.name, x.task_name) for x in sent.declared] == [
        ("flow_a.rate", "flow_a"),
        ("flow_b.concurrency", "flow_b"),
    ]


@pytest.mark.parametrize(
    ("signature", "text"),
    [
        # A call by position would put the task in the empty key, silently.
        (
            "def send(invoice, customer_id): ...",
            re.escape("may be passed by position")
            + ".*"
            + re.escape("make it keyword-only, def send(..., *, customer_id)"),
        ),
        (
            "def send(invoice, customer_id='', /): ...",
            re.escape("positional-only") + ".*" + re.escape("def send(..., *, customer_id)"),
        ),
        ("def send(invoice, *args): ...", re.escape("no keyword argument of that name: add one")),
    ],
)
def test_a_key_argument_that_may_be_passed_by_position_fails_at_import(signature: str, text: str) -> None:
    scope: dict[str, Any] = {}
    exec(signature, scope)
    with pytest.raises(ValueError, match=text):
        task(name="flow_positional", concurrency=2, limit_key="customer_id")(scope["send"])
    assert registry.get("flow_positional") is None


def test_a_store_full_of_limits_is_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    @task(name="flow_full", concurrency=1)
    def full() -> None: ...

    store = Store(
        errors.TaskyardError(
            errors.Code.RESOURCE_EXHAUSTED,
            "TOO_MANY_LIMITS",
            "at most 10000 limits are kept; delete some first",
        ),
        errors.unavailable("a second request: the first refusal was retried"),
    )
    try:
        with caplog.at_level("ERROR", logger=limit_declarations.__name__):
            assert asyncio.run(limit_declarations.declare_registered(store, ["flow_full"])) == 0
    finally:
        registry.unregister("flow_full")
    assert len(store.requests) == 1
    assert "limit declarations refused: at most 10000 limits are kept" in caplog.text


def test_a_refused_declaration_is_not_retried_and_nothing_is_sent_without_limits() -> None:
    @task(name="flow_c", concurrency=1)
    def c() -> None: ...

    store = Store(errors.invalid([errors.FieldViolation(field="declared[0].name", description="taken")]))
    try:
        assert asyncio.run(limit_declarations.declare_registered(store, ["flow_c"])) == 0
    finally:
        registry.unregister("flow_c")
    assert len(store.requests) == 1
    idle = Store()
    assert asyncio.run(limit_declarations.declare_registered(idle, ["flow_c"])) == 0
    assert idle.requests == []


def test_the_guide_declares_as_written() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "writing-tasks.md").read_text()
    part = text.split("\n## Flow control\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", part, re.S)
    assert block is not None
    try:
        exec(block.group(1), {"task": task})
        tdef = registry.get("send_invoice")
        assert tdef is not None and tdef.limits is not None
        assert [m.name for m in tdef.limits.to_protos()] == ["send_invoice.rate", "send_invoice.concurrency"]
        assert tdef.limits.key_argument == "customer_id"
    finally:
        registry.unregister("send_invoice")


def test_a_task_declares_a_circuit_breaker_per_downstream() -> None:
    @task(name="flow_breaker", breaker="5/30s", breaker_cool_down=10, limit_key="host")
    def call(path: str, *, host: str) -> str:
        return path

    try:
        tdef = registry.get("flow_breaker")
        assert tdef is not None and tdef.limits is not None
        (limit,) = tdef.limits.to_protos()
        assert (limit.name, limit.task_name, limit.key_argument, limit.per_key) == (
            "flow_breaker.breaker",
            "flow_breaker",
            "host",
            True,
        )
        assert limit.breaker.failure_threshold == 5 and limit.breaker.window.seconds == 30
        assert limit.breaker.cool_down.seconds == 10
    finally:
        registry.unregister("flow_breaker")


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({"breaker": "often"}, "breaker: a breaker is failures/window"),
        ({"breaker": "0/30s"}, "failure_threshold must be 1 to"),
        ({"breaker_cool_down": 5}, "breaker_cool_down= applies with breaker="),
        ({"breaker": "5/30s", "breaker_cool_down": 0}, "breaker_cool_down= takes seconds above 0"),
    ],
)
def test_a_bad_breaker_declaration_fails_at_import(options: dict[str, Any], text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(text)):
        task(name="flow_bad_breaker", **options)(lambda: None)
    assert registry.get("flow_bad_breaker") is None
