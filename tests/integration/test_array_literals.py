"""The array literals the store sends for text columns (arrays.text_array)
read back as the same strings, whatever is in them."""

from __future__ import annotations

import asyncpg
import pytest

from taskyard.result_store.arrays import text_array

AWKWARD = [
    "plain",
    "",
    "NULL",
    "null",
    "Null",
    "nullable",
    "a,b",
    "{x}",
    "}",
    'say "hi"',
    "back\\slash",
    "\\",
    '"',
    " lead",
    "trail ",
    "in side",
    "tab\there",
    "new\nline",
    "cr\rx",
    "vt\vx",
    "ff\fx",
    "héllo",
    "日本",
    "emoji 🙂",
    "\u00a0nbsp",
    "NULL,NULL",
]


@pytest.mark.parametrize(
    "values",
    [
        [],
        ["a"],
        [""],
        ["", ""],
        ["0123456789abcdef", "fedcba9876543210"],
        ["noop", "tasks.add", "pool-1:host/2", "w@x#y$z%"],
        AWKWARD,
        *[[v] for v in AWKWARD],
        *[["ok", v, "ok"] for v in AWKWARD],
    ],
)
async def test_text_array_round_trips(database_url: str, values: list[str]) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        literal = text_array(values)
        assert await conn.fetchval("SELECT $1::text::text[]", literal) == values
    finally:
        await conn.close()


def test_common_values_are_left_bare() -> None:
    assert text_array(["0123456789abcdef", "tasks.add"]) == "{0123456789abcdef,tasks.add}"
    assert text_array(["", ""]) == '{"",""}'
    assert text_array([]) == "{}"
