"""docs/transactional-enqueue.md shows excerpts of the example programs the acceptance
tests run (tests/acceptance/test_transactional_enqueue.py): each excerpt is in its file,
word for word, so what a reader copies is what was run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "transactional-enqueue.md"
_FROM = re.compile(r"^From `(examples/transactional/[^`]+)`", re.MULTILINE)
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _excerpts() -> list[tuple[str, str]]:
    """(file, code) of every code block under a "From `file`" line, up to the next heading."""
    text = DOC.read_text()
    out: list[tuple[str, str]] = []
    for found in _FROM.finditer(text):
        end = text.find("\n#", found.end())
        section = text[found.end() : end if end >= 0 else len(text)]
        out += [(found[1], m[2]) for m in _BLOCK.finditer(section) if m[1] != "bash"]
    return out


def test_every_excerpt_is_in_its_example_file() -> None:
    excerpts = _excerpts()
    assert {f for f, _ in excerpts} == {
        "examples/transactional/asyncpg_submit.py",
        "examples/transactional/psycopg_submit.py",
        "examples/transactional/sqlalchemy_submit.py",
        "examples/transactional/go/main.go",
        "examples/transactional/node/submit.mjs",
    }
    for file, code in excerpts:
        assert code in (ROOT / file).read_text(), f"{file} no longer holds:\n{code}"
