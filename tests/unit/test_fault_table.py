"""docs/reliability.md's fault table names, for every row, tests that exist: a test
renamed or removed shows here, not as a row that claims coverage no one runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = 24


def _table() -> list[str]:
    text = (ROOT / "docs" / "reliability.md").read_text()
    section = text.split("## The fault table", 1)[1].split("\n### ", 1)[0]
    return [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]


def test_every_row_names_tests_that_exist() -> None:
    rows = _table()
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, ROWS + 1))
    for row in rows:
        tests_cell = row.rstrip(" |").rsplit("|", 1)[1]
        named = re.findall(r"`((?:tests/\w+/)?test_\w+\.py)?(?:::(\w+))?`", tests_cell)
        last_file = ""
        for file, function in named:
            last_file = file or last_file
            if not last_file:
                continue
            path = ROOT / (last_file if "/" in last_file else f"tests/acceptance/{last_file}")
            assert path.is_file(), f"row {row.split('|')[1].strip()}: no {path}"
            if function:
                assert re.search(rf"def {function}\(", path.read_text()), f"no {function} in {path}"
        assert named or "#a-pool-cut-off-from-the-store-alone" in tests_cell, f"a row without tests: {row}"
