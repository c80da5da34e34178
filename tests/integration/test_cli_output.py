"""Every ``taskyard`` command that prints data prints the API's own JSON with ``--output json``.

The command list comes from the click group itself: a new command without
``--output``, or without an invocation below, fails here.

The tests share one cluster (per module and test process): each invocation makes its
objects under names of its own (``own``) and looks at those alone, so that no test
depends on another or on the order they run in.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result
from google.protobuf import json_format
from google.protobuf.message import Message
from integration.cli_commands import ALL_COMMANDS, DATA_COMMANDS, FILE_WRITERS, SERVICE_RUNNERS
from support.cluster import Cluster
from support.fixtures import print_logs_if_failed
from support.waiting import wait_until

from taskyard.cli.main import cli
from taskyard.client import FailureFilter
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import limit_service_pb2 as ls
from taskyard.v1 import limit_service_pb2_grpc, schedule_service_pb2_grpc, task_service_pb2_grpc
from taskyard.v1 import queue_service_pb2 as qs
from taskyard.v1 import schedule_service_pb2 as ss
from taskyard.v1 import task_service_pb2 as ts
from taskyard.v1 import tenant_service_pb2 as tns

# One process runs the module: its shared cluster starts once.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(120), pytest.mark.xdist_group("cli-output")]


@pytest.fixture
def cluster(module_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The module's cluster (support.fixtures), its logs shown when a test on it fails."""
    yield module_cluster
    print_logs_if_failed(module_cluster, request)


def own(stem: str) -> str:
    """A name no other invocation uses on the shared cluster."""
    return f"{stem}-{secrets.token_hex(4)}"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def api_mapping(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return data


@dataclasses.dataclass(frozen=True, kw_only=True)
class Invocation:
    args: list[str]
    # The response message the command's RPC returns.
    reply: type[Message]
    # What that reply must say, given its JSON.
    check: Callable[[dict[str, Any]], object]


INVOCATIONS: dict[str, Callable[[Any], Invocation]] = {}


def invocation(command: str) -> Callable[[Callable[[Any], Invocation]], Callable[[Any], Invocation]]:
    def register(make: Callable[[Any], Invocation]) -> Callable[[Any], Invocation]:
        INVOCATIONS[command] = make
        return make

    return register


def finished_add(cluster: Any, *, queue: str = "") -> str:
    with cluster.client() as client:
        task = client.submit("add", 2, 3, queue=queue)
        assert client.wait(task.id, timeout=30).state.name == "SUCCESS"
        return str(task.id)


@invocation("task submit")
def _submit(cluster: Any) -> Invocation:
    def check(data: dict[str, Any]) -> None:
        assert data["task"]["name"] == "add" and data["task"]["args"] == [2, 3]

    return Invocation(args=["add", "2", "3"], reply=ts.SubmitTaskResponse, check=check)


@invocation("task get")
def _get(cluster: Any) -> Invocation:
    task_id = finished_add(cluster)
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())
    direct = api_mapping(stub.GetTask(ts.GetTaskRequest(id=task_id), timeout=10))
    return Invocation(args=[task_id], reply=ts.GetTaskResponse, check=lambda data: data == direct)


@invocation("task wait")
def _wait(cluster: Any) -> Invocation:
    def check(data: dict[str, Any]) -> None:
        assert data["timed_out"] is False and data["task"]["state"] == "TASK_STATE_SUCCESS"

    return Invocation(args=[finished_add(cluster)], reply=ts.WaitTaskResponse, check=check)


@invocation("task cancel")
def _cancel(cluster: Any) -> Invocation:
    with cluster.client() as client:
        sleeper = client.submit("sleep", 30)
    return Invocation(
        args=[sleeper.id, "--reason", "not needed"],
        reply=ts.CancelTaskResponse,
        check=lambda data: data["task"]["id"] == sleeper.id,
    )


@invocation("task retry")
def _task_retry(cluster: Any) -> Invocation:
    with cluster.client() as client:
        failed = client.submit("fail", max_retries=0)
        client.wait(failed.id, timeout=30)
    return Invocation(
        args=[failed.id], reply=qs.RetryTasksResponse, check=lambda data: data["ids"] == [failed.id]
    )


@invocation("task list")
def _list(cluster: Any) -> Invocation:
    queue = own("listed")
    task_id = finished_add(cluster, queue=queue)
    return Invocation(
        args=["--name", "add", "--queue", queue, "--all"],
        reply=ts.ListTasksResponse,
        check=lambda data: [t["id"] for t in data["tasks"]] == [task_id] and data["next_page_token"] == "",
    )


@invocation("task tree")
def _tree(cluster: Any) -> Invocation:
    task_id = finished_add(cluster)
    return Invocation(
        args=[task_id], reply=ts.GetTaskTreeResponse, check=lambda data: data["root_id"] == task_id
    )


@invocation("task explain")
def _explain(cluster: Any) -> Invocation:
    return Invocation(
        args=[finished_add(cluster)],
        reply=ts.ExplainTaskResponse,
        check=lambda data: data["reason"] == "WAIT_REASON_FINAL",
    )


@invocation("task logs")
def _logs(cluster: Any) -> Invocation:
    with cluster.client() as client:
        task = client.submit("chatty", lines=3)
        client.wait(task.id, timeout=30)

    def check(data: dict[str, Any]) -> None:
        assert [int(line["offset"]) for line in data["logs"]] == [0, 1, 2] and data["complete"] is True

    return Invocation(args=[task.id], reply=ts.GetTaskLogsResponse, check=check)


@invocation("queue status")
def _status(cluster: Any) -> Invocation:
    queue = own("status")
    finished_add(cluster, queue=queue)
    return Invocation(
        args=[],
        reply=qs.GetQueueStatusResponse,
        check=lambda data: data["servers"] == 1 and queue in [q["name"] for q in data["queues"]],
    )


@invocation("queue stats")
def _stats(cluster: Any) -> Invocation:
    queue = own("stats")
    finished_add(cluster, queue=queue)
    return Invocation(
        args=[],
        reply=qs.GetQueueStatusResponse,
        check=lambda data: {q["name"]: q["succeeded"] for q in data["queues"]}[queue] == "1",
    )


@invocation("queue servers")
def _servers(cluster: Any) -> Invocation:
    return Invocation(
        args=["--max-age", "1m"],
        reply=qs.ListServersResponse,
        check=lambda data: [s["server_name"] for s in data["servers"]] == ["test-cluster"],
    )


@invocation("queue pause")
def _pause(cluster: Any) -> Invocation:
    queue = own("reports")
    return Invocation(
        args=[queue],
        reply=qs.PauseQueueResponse,
        check=lambda data: data["queue"]["name"] == queue and data["queue"]["paused"] is True,
    )


@invocation("queue resume")
def _resume(cluster: Any) -> Invocation:
    queue = own("reports")
    with cluster.client() as client:
        client.queues.pause(queue)
    return Invocation(
        args=[queue], reply=qs.ResumeQueueResponse, check=lambda data: data["queue"]["paused"] is False
    )


@invocation("queue clear")
def _clear(cluster: Any) -> Invocation:
    queue = own("reports")
    with cluster.client() as client:
        client.queues.pause(queue)
        client.submit("noop", queue=queue)
    return Invocation(
        args=[queue, "--yes"], reply=qs.ClearQueueResponse, check=lambda data: data["cleared"] == "1"
    )


@invocation("queue retry")
def _retry(cluster: Any) -> Invocation:
    with cluster.client() as client:
        failed = client.submit("fail", max_retries=0)
        client.wait(failed.id, timeout=30)
    return Invocation(
        args=[failed.id], reply=qs.RetryTasksResponse, check=lambda data: data["ids"] == [failed.id]
    )


@invocation("queue purge")
def _purge(cluster: Any) -> Invocation:
    return Invocation(
        args=["--older-than", "30d", "--yes"],
        reply=qs.PurgeTasksResponse,
        check=lambda data: data["purged"] == "0",
    )


def nightly(cluster: Any) -> Any:
    with cluster.client() as client:
        return client.schedules.create(own("nightly"), "add", 1, 2, every=3600)


@invocation("schedule create")
def _create(cluster: Any) -> Invocation:
    name = own("nightly")

    def check(data: dict[str, Any]) -> None:
        assert data["schedule"]["name"] == name and data["schedule"]["interval"] == "5400s"

    return Invocation(
        args=[name, "add", "1", "2", "--every", "1h30m"], reply=ss.CreateScheduleResponse, check=check
    )


@invocation("schedule get")
def _schedule_get(cluster: Any) -> Invocation:
    made = nightly(cluster)
    stub = schedule_service_pb2_grpc.ScheduleServiceStub(cluster.channel())
    direct = api_mapping(stub.GetSchedule(ss.GetScheduleRequest(id=made.id), timeout=10))
    return Invocation(args=[made.name], reply=ss.GetScheduleResponse, check=lambda data: data == direct)


@invocation("schedule list")
def _schedule_list(cluster: Any) -> Invocation:
    made = nightly(cluster)
    return Invocation(
        args=["--all"],
        reply=ss.ListSchedulesResponse,
        check=lambda data: made.id in [s["id"] for s in data["schedules"]],
    )


@invocation("schedule pause")
def _schedule_pause(cluster: Any) -> Invocation:
    made = nightly(cluster)
    return Invocation(
        args=[made.name],
        reply=ss.PauseScheduleResponse,
        check=lambda data: data["schedule"]["paused"] is True,
    )


@invocation("schedule resume")
def _schedule_resume(cluster: Any) -> Invocation:
    made = nightly(cluster)
    with cluster.client() as client:
        client.schedules.pause(made.id)
    return Invocation(
        args=[made.id],
        reply=ss.ResumeScheduleResponse,
        check=lambda data: data["schedule"]["paused"] is False,
    )


@invocation("schedule delete")
def _schedule_delete(cluster: Any) -> Invocation:
    made = nightly(cluster)

    def check(data: dict[str, Any]) -> None:
        assert data == {}
        with cluster.client() as client, pytest.raises(Exception, match="NOT_FOUND"):
            client.schedules.get(made.id)

    return Invocation(args=[made.id, "--yes"], reply=ss.DeleteScheduleResponse, check=check)


@invocation("schedule trigger")
def _schedule_trigger(cluster: Any) -> Invocation:
    made = nightly(cluster)

    def check(data: dict[str, Any]) -> None:
        assert data["task"]["name"] == "add" and data["schedule"]["times_run"] == "1"

    return Invocation(args=[made.name], reply=ss.TriggerScheduleResponse, check=check)


def per_customer(cluster: Any) -> str:
    name = own("per-customer")
    with cluster.client() as client:
        client.limits.create(name, concurrency=3, per_key=True)
    return name


@invocation("limit create")
def _limit_create(cluster: Any) -> Invocation:
    name = own("openai")

    def check(data: dict[str, Any]) -> None:
        assert data["limit"]["name"] == name
        assert data["limit"]["rate"] == {"units": "500", "period": "1s", "burst": "50"}

    return Invocation(
        args=[name, "--rate", "500/s", "--burst", "50"], reply=ls.CreateLimitResponse, check=check
    )


@invocation("limit get")
def _limit_get(cluster: Any) -> Invocation:
    name = per_customer(cluster)
    stub = limit_service_pb2_grpc.LimitServiceStub(cluster.channel())
    direct = api_mapping(stub.GetLimit(ls.GetLimitRequest(name=name), timeout=10))

    def check(data: dict[str, Any]) -> None:
        # Usage is the scheduler's live view: the definition must be the same.
        assert {k: v for k, v in data["limit"].items() if k != "usage"} == {
            k: v for k, v in direct["limit"].items() if k != "usage"
        }

    return Invocation(args=[name], reply=ls.GetLimitResponse, check=check)


@invocation("limit list")
def _limit_list(cluster: Any) -> Invocation:
    name = per_customer(cluster)
    return Invocation(
        args=["--all"],
        reply=ls.ListLimitsResponse,
        check=lambda data: name in [m["name"] for m in data["limits"]],
    )


@invocation("limit update")
def _limit_update(cluster: Any) -> Invocation:
    name = per_customer(cluster)

    def check(data: dict[str, Any]) -> None:
        assert data["limit"]["concurrency"] == {"max_units": "5"} and data["limit"]["per_key"] is True

    return Invocation(args=[name, "--concurrency", "5"], reply=ls.UpdateLimitResponse, check=check)


@invocation("limit delete")
def _limit_delete(cluster: Any) -> Invocation:
    name = per_customer(cluster)

    def check(data: dict[str, Any]) -> None:
        assert data == {"tasks_released": "0"}
        with cluster.client() as client, pytest.raises(Exception, match="NOT_FOUND"):
            client.limits.get(name)

    return Invocation(args=[name, "--yes"], reply=ls.DeleteLimitResponse, check=check)


@invocation("limit weight")
def _limit_weight(cluster: Any) -> Invocation:
    key = own("tenant-a")
    return Invocation(
        args=[key, "3"],
        reply=ls.SetKeyWeightResponse,
        check=lambda data: data["weight"] == {"key": key, "weight": 3, "tenant": ""},
    )


@invocation("limit weights")
def _limit_weights(cluster: Any) -> Invocation:
    key = own("tenant-a")
    with cluster.client() as client:
        client.limits.set_weight(key, 3)
    return Invocation(
        args=[],
        reply=ls.ListKeyWeightsResponse,
        check=lambda data: {"key": key, "weight": 3, "tenant": ""} in data["weights"],
    )


def dead_letter(cluster: Any) -> str:
    """A task dead-lettered now (the example ``fail``, no retry), listed as such."""
    with cluster.client() as client:
        failed = client.submit("fail", max_retries=0)
        client.wait(failed.id, timeout=30)
        only = FailureFilter(task_ids=[failed.id])
        wait_until(lambda: client.failures.list(only).items, 30, "the task listed as a dead letter")
    return str(failed.id)


def slow_redrive(cluster: Any, *, paused: bool = False) -> str:
    """A redrive that stays RUNNING (0.01 a second: its first task is due in 100 s)."""
    with cluster.client() as client:
        started = client.failures.redrive(FailureFilter(task_ids=[dead_letter(cluster)]), rate=0.01)
        assert started.redrive is not None
        if paused:
            client.failures.pause_redrive(started.redrive.id)
    return started.redrive.id


@invocation("failures groups")
def _failure_groups(cluster: Any) -> Invocation:
    dead_letter(cluster)
    return Invocation(
        args=["--name", "fail"],
        reply=fs.ListFailureGroupsResponse,
        check=lambda data: data["groups"] and {g["name"] for g in data["groups"]} == {"fail"},
    )


@invocation("failures list")
def _failures_list(cluster: Any) -> Invocation:
    task_id = dead_letter(cluster)
    return Invocation(
        args=["--task", task_id],
        reply=fs.ListFailuresResponse,
        check=lambda data: [d["task_id"] for d in data["failures"]] == [task_id],
    )


@invocation("failures purge")
def _failures_purge(cluster: Any) -> Invocation:
    task_id = dead_letter(cluster)
    return Invocation(
        args=["--task", task_id, "--dry-run"],
        reply=fs.PurgeDeadLettersResponse,
        check=lambda data: data["purged"] == "1",  # int64: a string in the JSON mapping
    )


@invocation("redrive get")
def _redrive_get(cluster: Any) -> Invocation:
    redrive_id = slow_redrive(cluster)
    return Invocation(
        args=[redrive_id], reply=fs.GetRedriveResponse, check=lambda data: data["redrive"]["id"] == redrive_id
    )


@invocation("redrive list")
def _redrive_list(cluster: Any) -> Invocation:
    redrive_id = slow_redrive(cluster)
    return Invocation(
        args=[],
        reply=fs.ListRedrivesResponse,
        check=lambda data: redrive_id in [r["id"] for r in data["redrives"]],
    )


@invocation("redrive items")
def _redrive_items(cluster: Any) -> Invocation:
    redrive_id = slow_redrive(cluster)
    return Invocation(
        args=[redrive_id],
        reply=fs.ListRedriveItemsResponse,
        check=lambda data: [i["outcome"] for i in data["items"]] == ["REDRIVE_OUTCOME_PENDING"],
    )


def _redrive_control(command: str, state: str, *, paused: bool = False) -> None:
    @invocation(f"redrive {command}")
    def make(cluster: Any) -> Invocation:
        redrive_id = slow_redrive(cluster, paused=paused)
        return Invocation(
            args=[redrive_id],
            reply=getattr(fs, f"{command.capitalize()}RedriveResponse"),
            check=lambda data: data["redrive"]["state"] == state,
        )


_redrive_control("pause", "REDRIVE_STATE_PAUSED")
_redrive_control("resume", "REDRIVE_STATE_RUNNING", paused=True)
_redrive_control("cancel", "REDRIVE_STATE_CANCELLED")


def tenant_acme(cluster: Any) -> str:
    name = own("acme")
    with cluster.client() as client:
        client.tenants.create(name, max_concurrency=5, weight=2)
    return name


@invocation("tenant create")
def _tenant_create(cluster: Any) -> Invocation:
    name = own("acme")

    def check(data: dict[str, Any]) -> None:
        tenant = data["tenant"]
        assert (tenant["name"], tenant["state"], tenant["weight"]) == (name, "TENANT_STATE_ACTIVE", 2)
        assert tenant["quota"]["rate"] == {"units": "100", "period": "1s", "burst": "0"}

    return Invocation(
        args=[name, "--rate", "100/s", "--weight", "2"], reply=tns.CreateTenantResponse, check=check
    )


@invocation("tenant get")
def _tenant_get(cluster: Any) -> Invocation:
    name = tenant_acme(cluster)
    return Invocation(
        args=[name],
        reply=tns.GetTenantResponse,
        check=lambda data: data["tenant"]["quota"]["max_concurrency"] == "5",
    )


@invocation("tenant list")
def _tenant_list(cluster: Any) -> Invocation:
    name = tenant_acme(cluster)
    return Invocation(
        args=["--all"],
        reply=tns.ListTenantsResponse,
        check=lambda data: name in [t["name"] for t in data["tenants"]],
    )


@invocation("tenant update")
def _tenant_update(cluster: Any) -> Invocation:
    name = tenant_acme(cluster)

    def check(data: dict[str, Any]) -> None:
        # Only what was given changes: the weight stays.
        assert data["tenant"]["quota"]["max_concurrency"] == "9" and data["tenant"]["weight"] == 2

    return Invocation(args=[name, "--max-concurrency", "9"], reply=tns.UpdateTenantResponse, check=check)


@invocation("tenant suspend")
def _tenant_suspend(cluster: Any) -> Invocation:
    name = tenant_acme(cluster)
    return Invocation(
        args=[name, "--reason", "invoice overdue", "--yes"],
        reply=tns.SuspendTenantResponse,
        check=lambda data: data["tenant"]["state"] == "TENANT_STATE_SUSPENDED",
    )


@invocation("tenant resume")
def _tenant_resume(cluster: Any) -> Invocation:
    name = tenant_acme(cluster)
    with cluster.client() as client:
        client.tenants.suspend(name)
    return Invocation(
        args=[name],
        reply=tns.ResumeTenantResponse,
        check=lambda data: data["tenant"]["state"] == "TENANT_STATE_ACTIVE",
    )


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_every_command_offers_the_three_outputs(command: str) -> None:
    options = {opt: p for p in ALL_COMMANDS[command].params for opt in p.opts}
    assert "--output" in options, f"`taskyard {command}` has no --output"
    assert isinstance(options["--output"].type, click.Choice)
    assert list(options["--output"].type.choices) == ["table", "json", "yaml"]
    assert "--json" not in options, f"`taskyard {command}` still takes --json: it is --output json"
    assert command in INVOCATIONS, f"add an invocation of `taskyard {command}` to this test"


def test_the_service_runners_are_still_commands() -> None:
    # Left out of the list above only while they exist and print no data.
    assert set(ALL_COMMANDS) >= SERVICE_RUNNERS | FILE_WRITERS


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_output_json_is_the_api_mapping_of_the_reply(command: str, cluster: Any) -> None:
    how = INVOCATIONS[command](cluster)
    result = run(*command.split(), *how.args, "--output", "json", "--target", cluster.target)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # Parsing refuses unknown fields; printing it back must give the same JSON: it is the mapping.
    message = json_format.ParseDict(data, how.reply())
    assert api_mapping(message) == data
    assert how.check(data) in (None, True), data


def test_yaml_is_the_same_data_and_a_table_is_for_people(cluster: Any) -> None:
    task_id = finished_add(cluster)
    as_json = json.loads(run("task", "get", task_id, "-o", "json", "--target", cluster.target).stdout)
    as_yaml = yaml.safe_load(run("task", "get", task_id, "-o", "yaml", "--target", cluster.target).stdout)
    assert as_yaml == as_json
    table = run("task", "get", task_id, "--target", cluster.target)
    rows = dict(line.split(":", 1) for line in table.stdout.splitlines())
    assert rows["state"].strip() == "SUCCESS" and rows["result"].strip() == "5"


def test_a_followed_stream_prints_one_json_message_per_line(cluster: Any) -> None:
    with cluster.client() as client:
        task = client.submit("chatty", lines=20, batch=5, pause=0.05)
    result = run("task", "logs", task.id, "--follow", "-o", "json", "--target", cluster.target)
    assert result.exit_code == 0, result.output
    messages = [
        json_format.ParseDict(json.loads(line), ts.StreamTaskLogsResponse())
        for line in result.stdout.splitlines()
    ]
    logged = [x for m in messages for x in m.logs]
    assert [x.offset for x in logged] == list(range(len(logged)))
    assert [x.message for x in logged if x.type == "info"] == [f"line {i}" for i in range(20)]


def test_an_unreachable_gateway_is_one_error_line_and_its_own_status() -> None:
    result = run("task", "get", "01a229d4-a696-7d93-9d5e-7262d214bc10", "--target", "127.0.0.1:1")
    assert result.exit_code == 5
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: UNAVAILABLE"), (
        result.stderr
    )


def test_a_bad_request_names_each_bad_field_once(cluster: Any) -> None:
    result = run("schedule", "create", "bad", "noop", "--cron", "99 * * * *", "--target", cluster.target)
    assert result.exit_code == 1 and result.stdout == ""
    first, *violations = result.stderr.splitlines()
    assert first.startswith("error: INVALID_ARGUMENT") and "schedule.cron" not in first, first
    assert violations and all(v.startswith("  - schedule.cron: ") for v in violations), result.stderr
    unknown = run("schedule", "get", "no-such-schedule", "--target", cluster.target)
    assert unknown.exit_code == 1
    assert unknown.stderr.splitlines() == [
        "error: NOT_FOUND (SCHEDULE_NOT_FOUND): schedule no-such-schedule not found"
    ], unknown.stderr


def test_json_is_asked_for_with_output_json_only() -> None:
    result = run("task", "get", "x", "--json", "--target", "127.0.0.1:1")
    assert result.exit_code == 2 and result.stdout == ""
    assert "No such option '--json'" in result.stderr, result.stderr
