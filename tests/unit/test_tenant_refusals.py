"""One refusal, one code and one message: a tenant's refusals as the gateway makes
them (before a call runs) and as the store makes them (inside a write)."""

from __future__ import annotations

from taskyard.core import errors, tenants
from taskyard.gateway import tenancy
from taskyard.result_store.writes import tenant_checks


def test_a_suspended_tenant_is_refused_alike_by_the_gateway_and_the_store() -> None:
    gateway, store = tenancy.suspended("acme"), tenant_checks.suspended_tenant("acme")
    assert (gateway.code, gateway.reason, gateway.message) == (store.code, store.reason, store.message)
    assert gateway.code is errors.Code.FAILED_PRECONDITION and gateway.reason == tenants.TENANT_SUSPENDED
    assert "'acme' is suspended" in gateway.message and "ResumeTenant" in gateway.message


def test_an_unknown_tenant_has_one_message_and_the_code_of_where_it_is_refused() -> None:
    gateway, store = tenancy.unknown("ghost"), tenant_checks.unknown_tenant("ghost")
    assert gateway.message == store.message == tenants.unknown_message("ghost")
    assert gateway.reason == store.reason == tenants.TENANT_UNKNOWN
    # The gateway refuses a call's tenant (its token's, or the one an operator acts
    # as); the store a write naming a tenant with no row (docs/tenants.md).
    assert gateway.code is errors.Code.PERMISSION_DENIED
    assert store.code is errors.Code.FAILED_PRECONDITION
