"""Tenant names and qualified names (core/tenants.py)."""

from __future__ import annotations

import pytest

from taskyard.core import limits, names, tenants
from taskyard.v1 import limit_pb2


@pytest.mark.parametrize("name", ["a", "acme", "team-7", "0", "a" * 64])
def test_a_tenant_name_of_lowercase_letters_digits_and_dashes_fits(name: str) -> None:
    assert tenants.fits(name) and tenants.problem(name) is None


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("", "must not be empty"),
        ("a" * 65, "at most 64 characters, got 65"),
        ("Acme", "[a-z0-9-]"),
        ("acme/x", "[a-z0-9-]"),
        ("acme corp", "[a-z0-9-]"),
        ("ac_me", "[a-z0-9-]"),
        ("é", "[a-z0-9-]"),
    ],
)
def test_a_bad_tenant_name_is_described(name: str, said: str) -> None:
    problem = tenants.problem(name)
    assert not tenants.fits(name) and problem is not None and said in problem


@pytest.mark.parametrize("name", ["default", "other"])
def test_the_names_of_the_default_tenant_and_the_metrics_overflow_are_reserved(name: str) -> None:
    # A pool's --serve-tenant default means the default tenant, and the metrics label
    # 'other' counts the tenants past their bound: a tenant of either name would merge.
    problem = tenants.problem(name)
    assert problem is not None and "reserved" in problem


def test_the_default_tenants_names_stay_bare_and_another_tenants_are_qualified() -> None:
    assert tenants.qualify("", "reports") == "reports"
    assert tenants.qualify("acme", "reports") == "acme/reports"
    assert tenants.split("acme/reports") == ("acme", "reports")
    assert tenants.split("reports") == ("", "reports")
    assert tenants.strip("acme", "acme/reports") == "reports"
    assert tenants.strip("", "reports") == "reports"


def test_no_name_can_pass_for_a_qualified_one() -> None:
    # The separator is outside the names' charset, so a stored name splits one way only.
    assert not names.fits("acme/reports")
    assert tenants.SEPARATOR not in names.PATTERN


@pytest.mark.parametrize("name", ["tenant.concurrency", "tenant.rate", "tenant.mine"])
def test_a_limit_may_not_take_the_tenants_quotas_names(name: str) -> None:
    limit = limit_pb2.Limit(name=name, concurrency=limit_pb2.ConcurrencyLimit(max_units=1))
    said = [v.description for v in limits.limit_violations(limit) if v.field == "limit.name"]
    assert said and "must not start with 'tenant.'" in said[0]
    assert not limits.limit_violations(limit_pb2.Limit(name="tenants.x", concurrency=limit.concurrency))
