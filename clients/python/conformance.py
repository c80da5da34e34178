"""The client conformance scenarios (clients/conformance/README.md), run with the Python client.

    TASKYARD_TARGET=127.0.0.1:50051 TASKYARD_TOKEN=... TASKYARD_READ_TOKEN=... \\
    TASKYARD_CLOSED_TARGET=127.0.0.1:1 TASKYARD_LIMIT=... TASKYARD_ADMIN_TOKEN=... \
    TASKYARD_TENANT_A=... TASKYARD_TENANT_A_TOKEN=... TASKYARD_TENANT_B=... TASKYARD_TENANT_B_TOKEN=... \
    python clients/python/conformance.py

Prints ``PASS <id>`` / ``FAIL <id>: ...`` per scenario and ``python conformance: N/25 passed``;
exits 0 only when every scenario passed.
"""

from __future__ import annotations

import datetime
import os
import secrets
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc

from taskyard.client import (
    Breaker,
    Client,
    DeadLetterReason,
    FailureFilter,
    LimitUse,
    RedriveOutcome,
    RedriveState,
    TaskInfo,
    TaskState,
    TaskyardError,
    TenantState,
)

SCENARIOS = Path(__file__).resolve().parent.parent / "conformance" / "scenarios.txt"
DOMAIN = "taskyard.dev"


class Failed(Exception):
    pass


def check(ok: object, what: str) -> None:
    if not ok:
        raise Failed(what)


@contextmanager
def refused(code: grpc.StatusCode, reason: str | None = None) -> Iterator[list[TaskyardError]]:
    """The block must fail with ``code`` (and ``reason``, when given); the error is kept."""
    caught: list[TaskyardError] = []
    try:
        yield caught
    except TaskyardError as err:
        check(err.code == code, f"expected {code.name}, got {err.code.name}: {err.message}")
        check(reason is None or err.reason == reason, f"expected reason {reason}, got {err.reason!r}")
        caught.append(err)
        return
    raise Failed(f"expected {code.name}, the call succeeded")


class Scenarios:
    def __init__(self, env: dict[str, str]) -> None:
        self.target = env["TASKYARD_TARGET"]
        self.token = env["TASKYARD_TOKEN"]
        self.read_token = env["TASKYARD_READ_TOKEN"]
        self.closed = env["TASKYARD_CLOSED_TARGET"]
        # A per-key concurrency limit of 2 the harness made; its scenario fails without it.
        self.limit = env.get("TASKYARD_LIMIT", "")
        self.client = Client(self.target, token=self.token, tls=False)
        # The redrive and breaker scenarios' client (scope admin); they fail without the token.
        admin_token = env.get("TASKYARD_ADMIN_TOKEN", "")
        self.admin = Client(self.target, token=admin_token, tls=False) if admin_token else None
        self.done_id = ""  # a task that succeeded, for error_already_final
        # tenant_isolation: two tenants' tokens (submit,read); it fails without them.
        self.tenant_tokens = [
            (env.get(f"TASKYARD_TENANT_{x}", ""), env.get(f"TASKYARD_TENANT_{x}_TOKEN", "")) for x in "AB"
        ]
        self.admin_token = admin_token

    def close(self) -> None:
        self.client.close()
        if self.admin is not None:
            self.admin.close()

    def finished(self, task_id: str) -> TaskInfo:
        task = self.client.wait(task_id, timeout=30)
        check(task.is_final, f"{task_id} not final after 30 s: {task.state.name}")
        return task

    def submit_and_wait(self) -> None:
        # submit returns the task itself (created is checked through submit_many below).
        task = self.client.submit("add", 2, 3)
        check(task.id, "no id")
        done = self.finished(task.id)
        check(done.state == TaskState.SUCCESS, f"state {done.state.name}")
        check(done.result == 5, f"result {done.result!r}")
        self.done_id = task.id

    def submit_options(self) -> None:
        task = self.client.submit(
            "echo",
            "x",
            priority="HIGH",
            queue="default",
            labels={"suite": "conformance"},
            max_retries=0,
            timeout=30,
        )
        got = self.client.get(task.id)
        check(got.name == "echo", f"name {got.name}")
        check(got.priority.name == "HIGH", f"priority {got.priority.name}")
        check(got.queue == "default", f"queue {got.queue}")
        check(got.labels.get("suite") == "conformance", f"labels {dict(got.labels)}")
        check(got.max_retries == 0, f"max_retries {got.max_retries}")
        check(got.timeout is not None and got.timeout.total_seconds() == 30, f"timeout {got.timeout}")

    def batch(self) -> None:
        submitted = self.client.submit_many([{"name": "add", "args": [i, i]} for i in range(5)])
        check(len(submitted) == 5, f"{len(submitted)} replies")
        check(len({s.id for s in submitted}) == 5, "ids not distinct")
        check(all(s.created for s in submitted), "not all created")
        results = [self.finished(s.id).result for s in submitted]
        check(results == [0, 2, 4, 6, 8], f"results {results}")

    def get(self) -> None:
        task = self.client.submit("add", 2, 3)
        got = self.client.get(task.id)
        check(got.id == task.id and got.name == "add", f"got {got.id} {got.name}")
        check(list(got.args) == [2, 3], f"args {got.args}")

    def wait_timeout(self) -> None:
        task = self.client.submit("sleep", 30)
        try:
            got = self.client.wait(task.id, timeout=0.3)
            check(not got.is_final, f"final after 0.3 s: {got.state.name}")
        finally:
            self.client.cancel(task.id)

    def list_pages(self) -> None:
        marker = f"conformance-{uuid.uuid4()}"
        ids = {self.client.submit("echo", marker).id for _ in range(5)}
        for task_id in ids:
            self.finished(task_id)
        page = self.client.list(name="echo", state="SUCCESS", page_size=2)
        check(len(page.tasks) == 2 and page.next_page_token, f"first page {len(page.tasks)} tasks")
        seen: list[str] = [t.id for t in self.client.iter_tasks(name="echo", state="SUCCESS", page_size=2)]
        check(len(seen) == len(set(seen)), "an id came twice")
        check(ids <= set(seen), f"missing {ids - set(seen)}")

    def cancel_queued(self) -> None:
        task = self.client.submit("add", 1, 1, countdown=3600)
        check(task.state == TaskState.SCHEDULED, f"state {task.state.name}")
        outcome = self.client.cancel(task.id)
        check(outcome.cancelled and outcome.task.state == TaskState.CANCELLED, f"{outcome}")
        check(self.client.get(task.id).state == TaskState.CANCELLED, "get does not show CANCELLED")

    def cancel_running(self) -> None:
        task = self.client.submit("sleep", 30)
        until = time.monotonic() + 15
        while self.client.get(task.id).state != TaskState.RUNNING:
            check(time.monotonic() < until, "not RUNNING within 15 s")
            time.sleep(0.05)
        outcome = self.client.cancel(task.id, wait=15)
        check(outcome.task.state == TaskState.CANCELLED, f"state {outcome.task.state.name}")
        check(outcome.cancelled, "not reported cancelled")

    def idempotent_resubmit(self) -> None:
        request_id = str(uuid.uuid4())
        first = self.client.submit("add", 4, 4, request_id=request_id)
        again = self.client.submit("add", 4, 4, request_id=request_id)
        check(first.id == again.id, "a second task for the same request id")
        # submit returns the task itself; the batch reply says whether it was created.
        third = self.client.submit_many([{"name": "add", "args": [4, 4], "request_id": request_id}])[0]
        check(third.id == first.id and not third.created, f"a repeat created={third.created}")
        made = self.client.submit("add", 5, 5)
        check(self.client.get(made.id).request_id, "no request id made by the client")

    def error_invalid_argument(self) -> None:
        with refused(grpc.StatusCode.INVALID_ARGUMENT) as caught:
            self.client.submit("")
        err = caught[0]
        check(err.domain == DOMAIN, f"domain {err.domain!r}")
        check(any(v.field == "task.name" for v in err.violations), f"violations {err.violations}")
        valid = {"name": "add", "args": [1, 2], "request_id": str(uuid.uuid4())}
        with refused(grpc.StatusCode.INVALID_ARGUMENT) as caught:
            self.client.submit_many([valid, {"name": ""}])
        check(
            any(v.field == "tasks[1].name" for v in caught[0].violations),
            f"violations {caught[0].violations}",
        )
        check(self.client.submit_many([valid])[0].created, "the refused batch created its valid task")

    def error_unknown_task(self) -> None:
        with refused(grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_TASK_NAME"):
            self.client.submit("no_such_task_conformance")

    def error_not_found(self) -> None:
        with refused(grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND"):
            self.client.get(str(uuid.uuid4()))

    def error_already_final(self) -> None:
        check(self.done_id, "no finished task (submit_and_wait failed)")
        with refused(grpc.StatusCode.FAILED_PRECONDITION, "TASK_ALREADY_FINAL"):
            self.client.cancel(self.done_id)

    def error_unauthenticated(self) -> None:
        for token, reason in (("", "TOKEN_MISSING"), ("not-a-valid-token-0000", "TOKEN_INVALID")):
            with (
                Client(self.target, token=token, tls=False) as anonymous,
                refused(grpc.StatusCode.UNAUTHENTICATED, reason),
            ):
                anonymous.get(str(uuid.uuid4()))

    def error_permission_denied(self) -> None:
        with Client(self.target, token=self.read_token, tls=False) as reader:
            with refused(grpc.StatusCode.PERMISSION_DENIED, "SCOPE_MISSING"):
                reader.submit("add", 1, 1)
            check(reader.get(self.done_id or self.client.submit("add", 1, 1).id).id, "the reader cannot get")

    def error_resource_exhausted(self) -> None:
        with refused(grpc.StatusCode.RESOURCE_EXHAUSTED):
            self.client.submit("echo", "x" * (5 << 20))

    def error_deadline(self) -> None:
        task = self.client.submit("sleep", 30)
        try:
            with refused(grpc.StatusCode.DEADLINE_EXCEEDED):
                self.client.wait(task.id, timeout=10, deadline=0.3)
        finally:
            self.client.cancel(task.id)

    def error_unavailable(self) -> None:
        with (
            Client(self.closed, token=self.token, tls=False, timeout=10) as nowhere,
            refused(grpc.StatusCode.UNAVAILABLE),
        ):
            nowhere.get(str(uuid.uuid4()))

    def task_failure(self) -> None:
        task = self.client.submit("fail", "boom-conformance", max_retries=0)
        done = self.finished(task.id)
        check(done.state == TaskState.FAILURE, f"state {done.state.name}")
        check(
            done.failure is not None and "boom-conformance" in done.failure.message, f"failure {done.failure}"
        )

    def submit_with_limit_key(self) -> None:
        check(self.limit, "TASKYARD_LIMIT is not set (see clients/conformance/README.md)")
        use = LimitUse(limit=self.limit, key="customer:42", units=1)
        task = self.client.submit("echo", "x", limits=[use], fairness_key="customer:42")
        got = self.client.get(task.id)
        check(use in got.limits, f"limits {got.limits}, want them to hold {use}")
        check(got.fairness_key == "customer:42", f"fairness_key {got.fairness_key!r}")
        done = self.finished(task.id)
        check(done.state == TaskState.SUCCESS, f"state {done.state.name}")

    def unknown_limit_refused(self) -> None:
        request_id = str(uuid.uuid4())
        unknown = [LimitUse(limit="no-such-limit", key="customer:42")]
        with refused(grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_LIMIT") as caught:
            self.client.submit("echo", "x", limits=unknown, request_id=request_id)
        found = {(v.field, v.reason) for v in caught[0].violations}
        check(("task.limits[0].limit", "UNKNOWN_LIMIT") in found, f"violations {caught[0].violations}")
        # Its request id is still unused: the refused task was not written.
        again = self.client.submit_many([{"name": "echo", "args": ["x"], "request_id": request_id}])
        check(again[0].created, "the refused submit's task was created")

    def run_task(self) -> None:
        done = self.client.run("add", 2, 3, wait=30)
        check(done.id, "no id")
        check(done.state == TaskState.SUCCESS, f"state {done.state.name}")
        check(done.result == 5, f"result {done.result!r}")
        slow = self.client.run("sleep", 30, wait=0.3)
        try:
            check(slow.id, "no id")
            check(not slow.is_final, f"final after 0.3 s: {slow.state.name}")
        finally:
            self.client.cancel(slow.id)

    def redrive_dead_letters(self) -> None:
        admin = self.admin
        check(admin is not None, "TASKYARD_ADMIN_TOKEN is not set (see clients/conformance/README.md)")
        assert admin is not None
        # Letters g-z only: a fingerprint masks numbers and hex ids, and keeps these.
        marker = "".join(secrets.choice("ghijklmnopqrstuvwxyz") for _ in range(12))
        ids = [
            self.client.submit("fail", f"conformance redrive {marker}", max_retries=0).id for _ in range(3)
        ]
        groups = set()
        for task_id in ids:
            self.finished(task_id)
            task = self.client.get(task_id)
            check(task.state == TaskState.FAILURE, f"{task_id}: state {task.state.name}")
            reason = task.dead_letter_reason
            check(
                reason == DeadLetterReason.RETRIES_EXHAUSTED, f"{task_id}: dead letter reason {reason.name}"
            )
            check(task.failure is not None and task.failure.group_id, f"{task_id}: failure {task.failure}")
            assert task.failure is not None
            groups.add(task.failure.group_id)
        check(len(groups) == 1, f"the three failures are in groups {groups}, want one")
        group = groups.pop()
        counts = {
            g.group_id: g.count
            for g in _every(lambda t: admin.failures.groups(FailureFilter(name="fail"), page_token=t))
        }
        check(
            counts.get(group) == 3,
            f"group {group} has count {counts.get(group)} among the groups of fail, want 3",
        )
        only = FailureFilter(group_id=group)
        listed = [d.task_id for d in _every(lambda t: admin.failures.list(only, page_token=t))]
        check(sorted(listed) == sorted(ids), f"the group's failures are {listed}, want {ids}")
        dry = admin.failures.redrive(only, rate=100, dry_run=True)
        check(
            dry.matched == 3 and len(dry.sample) == 3 and dry.redrive is None,
            f"dry run matched {dry.matched} with {len(dry.sample)} in the sample, redrive {dry.redrive}",
        )
        first = self.client.get(ids[0])
        check(
            first.state == TaskState.FAILURE and first.attempt == 1, f"after the dry run {first.state.name}"
        )
        redrive = admin.failures.redrive(only, rate=100, note=marker).redrive
        check(
            redrive is not None
            and redrive.id
            and redrive.matched == 3
            and redrive.created_by
            and redrive.note == marker,
            f"redrive {redrive}",
        )
        assert redrive is not None
        deadline = time.monotonic() + 30
        while redrive.state != RedriveState.DONE:
            check(time.monotonic() < deadline, f"redrive {redrive.id} is {redrive.state.name} after 30 s")
            time.sleep(0.1)
            redrive = admin.failures.get_redrive(redrive.id)
        check(
            redrive.requeued == 3 and redrive.skipped == 0 and redrive.finished_at is not None,
            f"done redrive {redrive}",
        )
        check(
            any(r.id == redrive.id for r in admin.failures.list_redrives().items),
            f"redrive {redrive.id} is not on the first page of redrives",
        )
        rid = redrive.id
        items = list(_every(lambda t: admin.failures.redrive_items(rid, page_token=t)))
        check(sorted(i.task_id for i in items) == sorted(ids), f"the redrive's items are {items}")
        for item in items:
            check(
                item.outcome == RedriveOutcome.REQUEUED and (item.failed_attempt, item.new_attempt) == (1, 2),
                f"item {item}",
            )
        for task_id in ids:
            again = self.finished(task_id)
            check(
                again.state == TaskState.FAILURE
                and again.attempt == 2
                and again.redrive_id == rid
                and again.redriven_from_attempt == 1,
                f"{task_id} did not run again from the redrive: {again.state.name} attempt {again.attempt} "
                f"redrive {again.redrive_id!r} from attempt {again.redriven_from_attempt}",
            )

    def breaker_limit(self) -> None:
        admin = self.admin
        check(admin is not None, "TASKYARD_ADMIN_TOKEN is not set (see clients/conformance/README.md)")
        assert admin is not None
        # The four runners share one suite: each makes a breaker of its own.
        name = f"conformance-breaker-{secrets.token_hex(4)}"
        seconds = datetime.timedelta(seconds=1)
        want = Breaker(failures=5, window=30 * seconds, min_attempts=8, cool_down=10 * seconds, probes=2)
        admin.limits.create(name, breaker=want, per_key=True)
        got = admin.limits.get(name)
        check(got.breaker == want, f"the breaker read back {got.breaker}, want {want}")
        check(got.per_key, "not per key")
        check(got.rate is None and got.concurrency is None, f"a breaker with another kind: {got}")
        # submit returns the task itself: submit_many says whether it was created.
        task = self.client.submit_many([{"name": "echo", "args": ["x"], "limits": {name: "payments-api"}}])[0]
        check(task.created, f"task {task.id} not created")
        stored = self.client.get(task.id)
        check(
            any(u.limit == name and u.key == "payments-api" for u in stored.limits),
            f"limits {stored.limits}, want them to hold {name} with key payments-api",
        )
        done = self.finished(task.id)
        check(done.state == TaskState.SUCCESS, f"state {done.state.name}")
        bad = {
            "limit.breaker.failure_threshold": Breaker(failures=0),
            "limit.breaker.half_open_probes": Breaker(failures=5, probes=1001),
        }
        for field, numbers in bad.items():
            with refused(grpc.StatusCode.INVALID_ARGUMENT) as caught:
                admin.limits.create(f"{name}-refused", breaker=numbers)
            fields = {v.field for v in caught[0].violations}
            check(field in fields, f"violations {caught[0].violations}, want one on {field}")
            with refused(grpc.StatusCode.NOT_FOUND, "LIMIT_NOT_FOUND"):
                admin.limits.get(f"{name}-refused")

    def tenant_isolation(self) -> None:
        admin = self.admin
        check(admin is not None, "TASKYARD_ADMIN_TOKEN is not set")
        assert admin is not None
        (a, a_token), (b, b_token) = self.tenant_tokens
        check(a and a_token and b and b_token, "TASKYARD_TENANT_A/B and their _TOKEN are not set")
        with (
            Client(self.target, token=a_token, tls=False) as ca,
            Client(self.target, token=b_token, tls=False) as cb,
        ):
            mine = ca.submit("add", 2, 3)
            done = ca.wait(mine.id, timeout=30)
            check(
                done.state == TaskState.SUCCESS and done.tenant == a,
                f"A's task: {done.state.name} of {done.tenant!r}",
            )
            theirs = cb.submit("add", 4, 4)
            check(cb.wait(theirs.id, timeout=30).is_final, f"B's task {theirs.id} not final after 30 s")

            def answer(call: Callable[[str], object], task_id: str) -> tuple[str, str, str]:
                with refused(grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND") as caught:
                    call(task_id)
                err = caught[0]
                return err.code.name, err.reason, err.message.replace(task_id, "<id>")

            calls: dict[str, Callable[[str], object]] = {
                "get": ca.get,
                "cancel": ca.cancel,
                "wait": lambda i: ca.wait(i, timeout=1),
            }
            for what, call in calls.items():
                other, missing = answer(call, theirs.id), answer(call, str(uuid.uuid4()))
                check(other == missing, f"A's {what} of B's task answered {other}, of a missing id {missing}")
            check(answer(cb.get, mine.id) == answer(cb.get, str(uuid.uuid4())), "B's get of A's task differs")
            listed = ca.list(page_size=100).tasks
            ids = {t.id for t in listed}
            check(mine.id in ids and theirs.id not in ids, f"A's list: {mine.id} in it, {theirs.id} not")
            check(
                {t.tenant for t in listed} == {a},
                f"A's list holds tenants {sorted({t.tenant for t in listed})}",
            )
            ca.submit("add", 1, 1)
            token = ca.list(page_size=1).next_page_token
            check(token, "A's first page of 1 task has no next page token")
            borrowed = cb.list(page_size=100, page_token=token).tasks
            check(
                mine.id not in {t.id for t in borrowed} and {t.tenant for t in borrowed} <= {b},
                f"B's list from A's page token holds tenants {sorted({t.tenant for t in borrowed})}",
            )
            with refused(grpc.StatusCode.PERMISSION_DENIED):
                ca.tenants.create(f"conformance-{secrets.token_hex(4)}")
        a_as_b = Client(self.target, token=a_token, tls=False, tenant=b)
        with a_as_b, refused(grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_ONLY"):
            a_as_b.get(theirs.id)
        seen = {admin.get(mine.id).tenant, admin.get(theirs.id).tenant}
        check(seen == {a, b}, f"the operator sees the tasks of tenants {sorted(seen)}")

        name = f"conformance-{secrets.token_hex(4)}"
        made = admin.tenants.create(name, max_concurrency=5, weight=2)
        check(
            (made.name, made.state, made.max_concurrency, made.weight) == (name, TenantState.ACTIVE, 5, 2),
            f"created {made}",
        )
        got = admin.tenants.get(name)
        check((got.max_concurrency, got.weight) == (5, 2), f"got {got}")
        check(name in {t.name for t in admin.tenants}, f"{name} not among the tenants listed")
        gone = admin.tenants.suspend(name, reason="conformance")
        check(gone.state == TenantState.SUSPENDED and gone.suspended_at is not None, f"suspended {gone}")
        with Client(self.target, token=self.admin_token, tls=False, tenant=name) as acting:
            with refused(grpc.StatusCode.FAILED_PRECONDITION, "TENANT_SUSPENDED"):
                acting.submit("add", 1, 2)
            back = admin.tenants.resume(name)
            check(back.state == TenantState.ACTIVE, f"resumed {back}")
            task = acting.submit("add", 1, 2)
            done = acting.wait(task.id, timeout=30)
            check(
                (done.state, done.result, done.tenant) == (TaskState.SUCCESS, 3, name),
                f"{task.id}: {done.state.name}, result {done.result!r}, tenant {done.tenant!r}",
            )


def _every(fetch: Callable[[str], Any]) -> Iterator[Any]:
    """Every item of a paged listing: ``fetch(page_token)`` returns a page."""
    token = ""
    while True:
        page = fetch(token)
        yield from page.items
        if not page.next_page_token or page.next_page_token == token:
            return
        token = page.next_page_token


def main() -> int:
    ids = SCENARIOS.read_text().split()
    scenarios = Scenarios(dict(os.environ))
    passed = 0
    try:
        for scenario in ids:
            run: Callable[[], None] = getattr(scenarios, scenario)
            try:
                run()
            except Exception as exc:  # a scenario's failure, whatever it is, is reported and the run goes on
                why = (
                    str(exc) if isinstance(exc, Failed) else traceback.format_exception_only(exc)[-1].strip()
                )
                print(f"FAIL {scenario}: {why}", flush=True)
            else:
                passed += 1
                print(f"PASS {scenario}", flush=True)
    finally:
        scenarios.close()
    print(f"python conformance: {passed}/{len(ids)} passed", flush=True)
    return 0 if passed == len(ids) else 1


if __name__ == "__main__":
    sys.exit(main())
