"""The test tree imports its modules by basename (rootdir-relative, no packages), so
two test files of one name in different tiers make pytest refuse to collect the
second: the whole run errors, whichever tier it is in."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_name() -> None:
    places: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        places[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: sorted(where) for name, where in places.items() if len(where) > 1}
    assert not shared, f"test modules that share a name (rename one): {shared}"
