"""PostgreSQL array literals: one text parameter for a whole column of a batch."""

from __future__ import annotations

# What array_in (PostgreSQL) treats specially in an unquoted element besides
# the delimiter: braces, quotes, backslashes and its (ASCII) whitespace; one
# `in` each scans a joined string at C speed, a regex class costs 50x that.
_ARRAY_SPECIAL = '{}"\\ \t\n\r\v\f'


def _bare_array_safe(joined: str) -> bool:
    for c in _ARRAY_SPECIAL:
        if c in joined:
            return False
    # An unquoted NULL, in any case, is the null value.
    return not (("l" in joined or "L" in joined) and "null" in joined.lower())


def text_array(values: list[str]) -> str:
    """``values`` as one PostgreSQL array literal, for a ``$n::text::text[]``
    parameter: asyncpg's array encoder costs several hundred ns an element
    (ABC isinstance checks) where one joined string costs tens. Elements are
    left bare when nothing in them is special to array_in (the common case:
    tokens, pool and worker ids, task names), else every one is quoted."""
    if not any(values):  # e.g. no task of a batch has a request id
        return "{" + ",".join(['""'] * len(values)) + "}"
    joined = ",".join(values)
    if all(values) and joined.count(",") == len(values) - 1 and _bare_array_safe(joined):
        return "{" + joined + "}"
    return "{" + ",".join(['"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values]) + "}"
