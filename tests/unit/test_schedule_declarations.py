"""@task(cron=..., tz=...) / @task(every=...): declarations checked at import."""

from __future__ import annotations

import datetime

import pytest

from taskyard.v1 import schedule_pb2
from taskyard.worker_pool import registry, task


def test_cron_and_interval_declarations() -> None:
    @task(name="decl_cron", cron="*/5 * * * *", tz="Europe/Paris")
    def a() -> None: ...

    @task(name="decl_every", every=datetime.timedelta(minutes=2), overlap="allow")
    async def b() -> None: ...

    try:
        cron = registry.get("decl_cron")
        every = registry.get("decl_every")
        assert cron is not None and cron.schedule is not None
        assert every is not None and every.schedule is not None
        p = cron.schedule.to_proto()
        assert (p.name, p.cron, p.time_zone, p.task.name) == (
            "decl_cron",
            "*/5 * * * *",
            "Europe/Paris",
            "decl_cron",
        )
        q = every.schedule.to_proto()
        assert q.interval.ToTimedelta() == datetime.timedelta(minutes=2)
        assert q.overlap == schedule_pb2.OVERLAP_POLICY_ALLOW
    finally:
        registry.unregister("decl_cron")
        registry.unregister("decl_every")


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"cron": "61 * * * *"}, "Bad minute"),
        ({"cron": "* * * * *", "tz": "Nowhere/City"}, "unknown time zone"),
        ({"every": 0.2}, "at least 1s"),
        ({"tz": "Europe/Paris"}, "needs cron"),
        ({"cron": "* * * * *", "every": 60}, "not both"),
        ({"every": 60, "overlap": "sometimes"}, "overlap"),
    ],
)
def test_bad_declarations_fail_at_import(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(ValueError, match=text):

        @task(name="decl_bad", **kwargs)  # type: ignore[call-overload]
        def bad() -> None: ...

    assert registry.get("decl_bad") is None


@pytest.mark.parametrize("name", ["send mail", "reports/nightly", "-lead", "n" * 129])
def test_a_schedule_named_after_a_task_outside_the_name_charset_fails_at_import(name: str) -> None:
    """A declared schedule takes its task's name, and schedule names have a charset
    (core/names.py): such a task may run, but not on a schedule."""
    with pytest.raises(ValueError, match="the schedule's name must be"):

        @task(name=name, every=60)
        def bad() -> None: ...

    assert registry.get(name) is None

    @task(name=name)
    def unscheduled() -> None: ...

    try:
        assert registry.get(name) is not None
    finally:
        registry.unregister(name)
