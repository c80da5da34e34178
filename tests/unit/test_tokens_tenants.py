"""A token's tenant (the tokens file's 4th field), who a call acts for, and the
refusals made for a tenant before anything runs (gateway/auth.py, tenancy.py)."""

from __future__ import annotations

from typing import Any

import pytest

from taskyard.bus.v1 import event_pb2, tenants_pb2
from taskyard.core import contract, errors, tenants
from taskyard.gateway import auth, tenancy
from taskyard.v1 import tenant_service_pb2

SECRET = "tenant-token-0123456789abcdef"
OTHER = "operator-token-0123456789abcdef"
ACTIVE = tenant_service_pb2.TENANT_STATE_ACTIVE
SUSPENDED = tenant_service_pb2.TENANT_STATE_SUSPENDED


def test_the_fourth_field_names_the_tenant_and_without_it_the_token_is_an_operators() -> None:
    acme, ops = auth.parse_tokens(f"{SECRET} submit,read acme-ci tenant=acme\n{OTHER} admin ops\n")
    assert (acme.name, acme.tenant) == ("acme-ci", "acme")
    assert (ops.name, ops.tenant) == ("ops", None)


@pytest.mark.parametrize(
    ("field", "says"),
    [
        ("tenant=Acme", "[a-z0-9-]"),
        ("tenant=", "must not be empty"),
        ("tenant=" + "a" * 65, "at most 64"),
        ("owner=acme", "the 4th field is 'tenant=NAME'"),
        ("tenant=default", "'default' is reserved"),
        ("tenant=other", "'other' is reserved"),
    ],
)
def test_a_bad_tenant_field_names_the_line_never_the_token(field: str, says: str) -> None:
    with pytest.raises(auth.TokensFileError) as exc:
        auth.parse_tokens(f"# tokens\n{OTHER} admin ops\n{SECRET} read ci {field}\n")
    assert "line 3" in str(exc.value) and says in str(exc.value)
    assert SECRET not in str(exc.value) and OTHER not in str(exc.value)


def _meta(name: str) -> tuple[tuple[str, str], ...]:
    return ((tenants.METADATA_KEY, name), ("authorization", "Bearer x"))


def test_who_a_call_acts_for() -> None:
    operator = auth.Identity(name="ops")
    assert operator.scope() == tenants_pb2.TenantScope(all=True)
    assert operator.home == "" and operator.sees("acme") and operator.sees("")
    acting = auth.act_as(_meta("acme"), operator)
    assert acting.acting == "acme" and acting.scope() == tenants_pb2.TenantScope(tenant="acme")
    assert acting.home == "acme" and not acting.sees("") and not acting.sees("beta")
    member = auth.Identity(name="acme-ci", tenant="acme")
    assert auth.act_as(_meta("acme"), member) is member  # its own name: ignored
    assert auth.act_as((), member).scope() == tenants_pb2.TenantScope(tenant="acme")
    with pytest.raises(errors.TaskyardError) as denied:
        auth.act_as(_meta("beta"), member)
    assert denied.value.code is errors.Code.PERMISSION_DENIED and denied.value.reason == tenants.OPERATOR_ONLY
    with pytest.raises(errors.TaskyardError) as bad:
        auth.act_as(_meta("Beta!"), operator)
    assert bad.value.code is errors.Code.INVALID_ARGUMENT and bad.value.reason == tenants.INVALID_TENANT
    assert bad.value.violations[0].field == "metadata.taskyard-tenant"
    assert getattr(bad.value.violations[0], "reason", "") == tenants.INVALID_TENANT


class _Store:
    """The store's tenants, and how often they were read."""

    def __init__(self) -> None:
        self.tenants: dict[str, tenant_service_pb2.Tenant] = {}
        self.version = 1
        self.reads = 0

    def put(self, name: str, state: tenant_service_pb2.TenantState = ACTIVE) -> None:
        self.tenants[name] = tenant_service_pb2.Tenant(name=name, state=state)
        self.version += 1

    async def call(self, method: Any, request: Any, **options: Any) -> Any:
        assert method is contract.STORE_TENANTS
        self.reads += 1
        if request.known_version == self.version:
            return tenants_pb2.ReadTenantsReply(version=self.version, unchanged=True)
        return tenants_pb2.ReadTenantsReply(tenants=list(self.tenants.values()), version=self.version)


class _Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


SUBMIT = "/taskyard.v1.TaskService/SubmitTask"
GET = "/taskyard.v1.TaskService/GetTask"
CANCEL = "/taskyard.v1.TaskService/CancelTask"


async def test_an_unknown_tenant_is_refused_after_a_fresh_read_and_a_new_one_is_taken_at_once() -> None:
    store, clock = _Store(), _Clock()
    cache = tenancy.TenantCache(store, clock=clock)
    member = auth.Identity(name="acme-ci", tenant="acme")
    refusal = await cache.refusal(GET, member)
    assert refusal is not None and refusal.code is errors.Code.PERMISSION_DENIED
    assert refusal.reason == tenants.TENANT_UNKNOWN and "'acme' is not known" in refusal.message
    # Created a moment ago: its tenant.created event drops the miss held, and the
    # next call reads again before refusing.
    store.put("acme")
    cache.tap(event_pb2.EventBatch(events=[event_pb2.Event(type="tenant.created")]))
    assert await cache.refusal(GET, member) is None
    reads = store.reads
    assert await cache.refusal(SUBMIT, member) is None
    assert store.reads == reads  # held, and recent
    clock.now += tenancy.MAX_AGE
    assert await cache.refusal(SUBMIT, member) is None
    assert store.reads == reads + 1


async def test_a_suspended_tenant_may_read_and_cancel_but_not_submit() -> None:
    store = _Store()
    store.put("acme", SUSPENDED)
    cache = tenancy.TenantCache(store)
    for who in (auth.Identity(name="acme-ci", tenant="acme"), auth.Identity(name="ops", acting="acme")):
        for method in tenancy.SUSPENDED_REFUSES:
            refusal = await cache.refusal(method, who)
            assert refusal is not None and refusal.code is errors.Code.FAILED_PRECONDITION, method
            assert refusal.reason == tenants.TENANT_SUSPENDED
        assert await cache.refusal(GET, who) is None
        assert await cache.refusal(CANCEL, who) is None
    # An operator over every tenant, or in the default one, is no suspended tenant.
    assert await cache.refusal(SUBMIT, auth.Identity(name="ops")) is None
    # A tenant.* event makes the copy stale: a resume is seen at the next call.
    store.put("acme", ACTIVE)

    cache.tap(event_pb2.EventBatch(events=[event_pb2.Event(type="tenant.resumed")]))
    assert await cache.refusal(SUBMIT, auth.Identity(name="acme-ci", tenant="acme")) is None


async def test_tenant_service_is_an_operators_but_for_reading_its_own() -> None:
    cache = tenancy.TenantCache(_Store())
    member = auth.Identity(name="acme-ci", tenant="acme")
    for method in tenancy.OPERATOR_METHODS:
        refusal = await cache.refusal(method, member)
        assert refusal is not None and refusal.reason == tenants.OPERATOR_ONLY
        assert refusal.code is errors.Code.PERMISSION_DENIED and "acme-ci" in refusal.message
        assert await cache.refusal(method, auth.Identity(name="ops")) is None
    # GetTenant answers for itself (NOT_FOUND for another's name), even unknown.
    assert await cache.refusal("/taskyard.v1.TenantService/GetTenant", member) is None


@pytest.mark.parametrize("method", sorted(auth.OPERATOR_METHODS))
def test_a_tenant_token_calling_an_operators_rpc_is_told_so_before_its_scopes(
    method: str, tmp_path: Any
) -> None:
    # A submit,read token of acme lacks 'admin' too, but no scope would let it: the
    # refusal says whose the token is (OPERATOR_ONLY), not a scope to add.
    path = tmp_path / "tokens"
    path.write_text(f"{SECRET} submit,read acme-ci tenant=acme\n{OTHER} read ops\n")
    authenticator = auth.Authenticator(auth.TokensFile(str(path)))
    refusal = authenticator.check(method, (("authorization", f"Bearer {SECRET}"),))
    assert refusal is not None and refusal.code is errors.Code.PERMISSION_DENIED
    assert refusal.reason == tenants.OPERATOR_ONLY and "acme-ci" in refusal.message
    # An operator's token short of the scope is told which scope it lacks.
    needs_admin = method.endswith(("CreateTenant", "UpdateTenant", "SuspendTenant", "ResumeTenant"))
    refusal = authenticator.check(method, (("authorization", f"Bearer {OTHER}"),))
    assert (refusal.reason if refusal else None) == ("SCOPE_MISSING" if needs_admin else None)
