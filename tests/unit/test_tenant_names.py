"""Tenant names and qualified names (core/tenants.py)."""

from __future__ import annotations

import pytest

from taskyard.core import names, tenants


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
