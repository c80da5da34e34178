"""ScheduleService end to end: a real cluster (gateway, scheduler, store, pool
processes), the Python client, the CLI and pool declarations."""

from __future__ import annotations

import datetime
import json
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from support.waiting import wait_until

from taskyard.cli.main import cli
from taskyard.client import TaskState, TaskyardError
from taskyard.v1 import schedule_pb2, schedule_service_pb2, schedule_service_pb2_grpc, task_pb2

pytestmark = pytest.mark.cluster(task_modules=("taskyard.examples", "support.schedule_tasks"))


def violations(err: TaskyardError) -> dict[str, str]:
    return {v.field: v.description for v in err.violations}


def test_create_get_list_pause_resume_trigger_delete(cluster: Any) -> None:
    with cluster.client() as c:
        s = c.schedules.create("adder", "add", 2, 3, cron="*/5 * * * *", time_zone="Europe/Paris")
        assert s.id and s.name == "adder" and s.task_name == "add" and s.args == (2, 3)
        assert s.cron == "*/5 * * * *" and s.time_zone == "Europe/Paris" and s.overlap == "skip"
        assert s.next_run_at is not None and s.next_run_at > datetime.datetime.now(datetime.UTC)
        assert s.next_run_at.minute % 5 == 0 and s.times_run == 0
        every = c.schedules.create("ticker", "noop", every=datetime.timedelta(minutes=1), paused=True)
        assert every.interval == datetime.timedelta(minutes=1) and every.paused and every.next_run_at is None

        assert c.schedules.get(s.id) == c.schedules.get("adder")
        page = c.schedules.list(page_size=1)
        assert [x.name for x in page.schedules] == ["adder"] and page.next_page_token
        rest = c.schedules.list(page_token=page.next_page_token)
        # Declared by the pool at start-up, listed by name with the others.
        assert [x.name for x in rest.schedules] == ["nightly_cleanup", "refresh_cache", "ticker"]

        paused = c.schedules.pause("adder")
        assert paused.paused and paused.next_run_at is None
        resumed = c.schedules.resume("adder")
        assert not resumed.paused and resumed.next_run_at is not None

        fired = c.schedules.trigger("adder")
        assert fired.schedule.times_run == 1 and fired.schedule.last_task_id == fired.task.id
        done = c.wait(fired.task.id, timeout=15)
        assert done.state is TaskState.SUCCESS and done.result == 5
        assert c.schedules.get("adder").next_run_at == resumed.next_run_at  # a trigger leaves it

        c.schedules.delete("adder")
        with pytest.raises(TaskyardError) as info:
            c.schedules.get("adder")
        assert info.value.code is grpc.StatusCode.NOT_FOUND
        assert c.get(fired.task.id).state is TaskState.SUCCESS  # its runs are kept


def test_declared_schedules_are_upserted_by_the_pool(cluster: Any) -> None:
    with cluster.client() as c:
        nightly = c.schedules.get("nightly_cleanup")
        assert nightly.declared and nightly.cron == "0 3 * * *" and nightly.time_zone == "Europe/Paris"
        assert nightly.next_run_at is not None
        assert nightly.next_run_at.astimezone(datetime.timezone(datetime.timedelta(0))).minute == 0
        refresh = c.schedules.get("refresh_cache")
        assert refresh.interval == datetime.timedelta(hours=6) and refresh.overlap == "allow"
        c.schedules.pause("nightly_cleanup")

    # A restarted pool re-declares: same id, still paused.
    def declarations() -> int:
        return cluster.log_text("worker-pool").count(" schedule(s): ")  # "declared 2 schedule(s): ..."

    declared = declarations()
    cluster.kill("worker-pool")
    cluster.start_service("worker-pool")
    cluster.wait_ready()
    wait_until(lambda: declarations() > declared, 10, "the restarted pool to declare its schedules")
    with cluster.client() as c:
        again = c.schedules.get("nightly_cleanup")
        assert again.id == nightly.id and again.paused and again.declared
        fired = c.schedules.trigger("nightly_cleanup")  # paused, but a trigger still runs
        assert c.wait(fired.task.id, timeout=15).result == "clean"


def test_bad_input_gets_field_violations(cluster: Any) -> None:
    with cluster.client() as c:
        c.schedules.create("taken", "noop", every=60)
        cases: list[tuple[dict[str, Any], str, str]] = [
            (dict(name="a", task="noop", cron="61 * * * *"), "schedule.cron", "Bad minute"),
            (dict(name="b", task="noop", cron="* * *"), "schedule.cron", "5 fields"),
            (
                dict(name="c", task="noop", cron="* * * * *", time_zone="Mars/Base"),
                "schedule.time_zone",
                "unknown",
            ),
            (dict(name="d", task="noop", every=0.5), "schedule.interval", "at least 1s"),
            (dict(name="e", task="no_such_task", every=60), "schedule.task.name", "no worker pool"),
            (dict(name="", task="noop", every=60), "schedule.name", "must not be empty"),
        ]
        for kwargs, field, text in cases:
            name, task = kwargs.pop("name"), kwargs.pop("task")
            with pytest.raises(TaskyardError) as info:
                c.schedules.create(name, task, **kwargs)
            assert info.value.code is grpc.StatusCode.INVALID_ARGUMENT, kwargs
            assert text in violations(info.value).get(field, ""), (field, violations(info.value))
        with pytest.raises(TaskyardError) as info:
            c.schedules.create("taken", "noop", every=60)
        assert info.value.code is grpc.StatusCode.ALREADY_EXISTS
        for call in (c.schedules.get, c.schedules.pause, c.schedules.trigger, c.schedules.delete):
            with pytest.raises(TaskyardError) as info:
                call("missing")
            assert info.value.code is grpc.StatusCode.NOT_FOUND
    # Template fields that make no sense for a repeated task are refused.
    stub = schedule_service_pb2_grpc.ScheduleServiceStub(cluster.channel())
    spec = task_pb2.TaskSpec(name="noop", request_id="r1", idempotency_key="k")
    spec.countdown.FromSeconds(5)
    sched = schedule_pb2.Schedule(name="tpl", cron="* * * * *", task=spec)
    with pytest.raises(grpc.RpcError) as rpc:
        stub.CreateSchedule(schedule_service_pb2.CreateScheduleRequest(schedule=sched))
    assert rpc.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    refused = violations(TaskyardError.from_rpc_error(rpc.value))
    for field in ("request_id", "countdown", "idempotency_key"):
        assert refused[f"schedule.task.{field}"] == "not allowed in a schedule's task"
    with pytest.raises(grpc.RpcError) as rpc:
        stub.CreateSchedule(schedule_service_pb2.CreateScheduleRequest())
    assert rpc.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_cli(cluster: Any) -> None:
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(cli, ["schedule", "--target", cluster.target, *args])
        return result

    r = run("create", "cli-add", "add", "1", "2", "--every", "90s", "--output", "json")
    assert r.exit_code == 0, r.output
    made = json.loads(r.output)["schedule"]
    assert made["name"] == "cli-add" and made["interval"] == "90s"
    r = run("get", "cli-add")
    assert r.exit_code == 0 and "every 1m30s" in r.output and "times_run" in r.output
    r = run("list")
    assert r.exit_code == 0 and "cli-add" in r.output
    assert run("pause", "cli-add").exit_code == 0
    assert run("resume", "cli-add").exit_code == 0
    r = run("trigger", "cli-add", "--output", "json")
    assert r.exit_code == 0, r.output
    fired = json.loads(r.output)
    assert fired["task"]["name"] == "add" and fired["schedule"]["times_run"] == "1"
    r = run("create", "bad", "noop", "--cron", "99 * * * *")
    assert r.exit_code == 1 and "schedule.cron" in r.output
    r = run("create", "bad", "noop")
    assert r.exit_code == 2
    assert run("delete", "cli-add").exit_code == 2  # no terminal to confirm on
    assert run("delete", "cli-add", "--yes").exit_code == 0
    assert run("get", "cli-add").exit_code == 1


def test_the_scheduler_fires_runs_by_itself(cluster: Any) -> None:
    with cluster.client() as c:
        s = c.schedules.create("fast", "add", 20, 22, every=1)
        got = wait_until(
            lambda: (g := c.schedules.get("fast")).times_run >= 2 and g.last_task_id and g,
            10,
            "the scheduler to fire the schedule twice",
        )
        run = c.wait(got.last_task_id, timeout=10)
        assert run.state is TaskState.SUCCESS and run.result == 42
        c.schedules.pause(s.id)
