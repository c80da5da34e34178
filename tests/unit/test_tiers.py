"""Every test carries the marker of its tier, given by its directory (tests/conftest.py),
so ``pytest -m unit`` and ``make test-unit`` select the same tests."""

from __future__ import annotations

import pytest


def test_a_test_under_unit_is_marked_unit(request: pytest.FixtureRequest) -> None:
    marked = {m.name for m in request.node.iter_markers()}
    assert "unit" in marked
    assert not marked & {"integration", "acceptance"}
