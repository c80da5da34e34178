"""The dashboard by tenant in a real browser (Debian's chromium driven by Playwright)
against a real cluster with an operator's token and a tenant's: the operator's header
has a Tenant picker listing the tenants, and picking one shows that tenant's tasks
only; the tenant's token has no picker and sees its own tasks only."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from playwright.sync_api import ConsoleMessage, Page, expect, sync_playwright
from support import ports
from support.chromium import CHROMIUM, CHROMIUM_ARGS, require_chromium
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.core import tenants
from taskyard.v1 import (
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
    tenant_service_pb2,
    tenant_service_pb2_grpc,
)

pytestmark = pytest.mark.timeout(180)


@contextlib.contextmanager
def chromium(tmp_path: Path) -> Iterator[tuple[Page, list[str]]]:
    require_chromium()
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 800},
        )
        page = context.new_page()
        errors: list[str] = []

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        try:
            yield page, errors
        finally:
            context.close()


def use_token(page: Page, token: str) -> None:
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Use", exact=True).click()


def test_an_operator_picks_a_tenant_and_a_tenants_token_sees_its_own(
    cluster_factory: Callable[..., Cluster], tmp_path: Path
) -> None:
    ops, acme = (f"{who}-{secrets.token_urlsafe(24)}" for who in ("ops", "acme"))
    tokens = tmp_path / "tokens"
    tokens.write_text(
        f"sha256:{hashlib.sha256(ops.encode()).hexdigest()}  admin  ops\n"
        f"{acme}  read  acme-viewer  tenant=acme\n"
    )
    port = ports.free_port()
    cluster = cluster_factory(start=False, http_port=port, grpc_tokens_file=str(tokens))
    cluster.start()
    channel = grpc.insecure_channel(cluster.target)
    as_ops = (("authorization", f"Bearer {ops}"),)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    tenant_service = tenant_service_pb2_grpc.TenantServiceStub(channel)

    def ready() -> bool:
        try:
            tenant_service.ListTenants(tenant_service_pb2.ListTenantsRequest(), metadata=as_ops, timeout=5)
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            return False
        return True

    def submit(tenant: str) -> str:
        spec = task_pb2.TaskSpec(name="noop")
        spec.countdown.FromSeconds(3600)
        metadata: Any = (*as_ops, (tenants.METADATA_KEY, tenant)) if tenant else as_ops
        request = task_service_pb2.SubmitTaskRequest(task=spec)
        return str(tasks.SubmitTask(request, metadata=metadata, timeout=10).task.id)

    try:
        wait_until(ready, 45, lambda: f"a gateway that answers\n{cluster.logs_tail()}")
        for name in ("acme", "beta"):
            tenant_service.CreateTenant(
                tenant_service_pb2.CreateTenantRequest(tenant=tenant_service_pb2.Tenant(name=name)),
                metadata=as_ops,
                timeout=10,
            )
        mine, theirs, default = submit("acme"), submit("beta"), submit("")
        with chromium(tmp_path) as (page, errors):
            page.goto(f"http://127.0.0.1:{port}/#/tasks")
            use_token(page, ops)
            rows = page.locator("#tasks tbody tr[data-task-id]")
            expect(rows).to_have_count(3)
            picker = page.get_by_label("Tenant")
            expect(picker).to_be_visible()
            expect(picker.locator("option")).to_have_text(["All tenants", "acme", "beta"])
            picker.select_option("acme")
            expect(rows).to_have_count(1)
            expect(page.locator(f'#tasks tr[data-task-id="{mine}"]')).to_be_visible()
            picker.select_option("")
            expect(rows).to_have_count(3)
            for ident in (theirs, default):
                expect(page.locator(f'#tasks tr[data-task-id="{ident}"]')).to_be_visible()
            # A tenant's token: no picker, its own tenant's tasks only.
            page.get_by_role("button", name="Forget").click()
            use_token(page, acme)
            expect(page.locator(f'#tasks tr[data-task-id="{mine}"]')).to_be_visible()
            expect(rows).to_have_count(1)
            expect(page.locator("#tenant-pick")).to_be_hidden()
            # The one refusal: ListTenants, by which the page learns the token is a tenant's.
            assert [e for e in errors if "403" not in e] == [] and len(errors) <= 1
    finally:
        channel.close()
