"""Named SQL: every statement of the store lives in ``sql/*.sql`` as
``-- name: x`` blocks, parsed once at import.

``{{name}}`` inside a block expands to the block called ``name`` (used for the
column list of a full task record). Parameters are named (``:ids``) and
rewritten once, at load, to asyncpg's ``$1``, ``$2``... in the order they first
appear; ``STATEMENTS[name].params`` keeps the names in that order, so a caller
passes values by name (``Db.fetch(name, **values)``, ``bind``). ``::`` casts,
string literals, quoted names and comments are left alone, and a positional
``$n`` is refused: every parameter has a name.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_INCLUDE = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")
# What may hold a colon that is not a parameter comes first, as one token each:
# comments, string literals (E'' ones with their backslash escapes), quoted
# names, dollar-quoted bodies and casts.
_TOKEN = re.compile(
    r"""
    (?P<skip>
        --[^\n]*
      | /\*.*?\*/
      | (?<![A-Za-z0-9_])[Ee]'(?:[^'\\]|\\.|'')*'
      | '(?:[^']|'')*'
      | "(?:[^"]|"")*"
      | \$(?P<tag>(?:[A-Za-z_][A-Za-z0-9_]*)?)\$.*?\$(?P=tag)\$
      | ::
    )
    | :(?P<param>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<positional>\$[0-9]+)
    """,
    re.VERBOSE | re.DOTALL,
)


def to_positional(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with its ``:name`` parameters as ``$n``, and the names by ``n``.

    A name used twice is one parameter. Raises ValueError on a ``$n``."""
    names: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        if m.group("skip") is not None:
            return m.group(0)
        if m.group("positional") is not None:
            raise ValueError(f"positional parameter {m.group(0)}: name it (:name)")
        n = names.setdefault(m.group("param"), len(names) + 1)
        return f"${n}"

    return _TOKEN.sub(sub, sql), tuple(names)


@dataclasses.dataclass(frozen=True, slots=True)
class Statement:
    """One named statement: its text for asyncpg and its parameters' names, by position."""

    name: str
    sql: str
    params: tuple[str, ...]
    _pick: Callable[[Mapping[str, Any]], tuple[Any, ...]] = dataclasses.field(repr=False, compare=False)

    @classmethod
    def of(cls, name: str, text: str) -> Statement:
        sql, params = to_positional(text)
        return cls(name, sql, params, _picker(params))

    def args(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional arguments: ``values`` in parameter order. Every
        parameter must be given, and nothing else."""
        if len(values) == len(self.params):
            try:
                return self._pick(values)
            except KeyError:
                pass
        missing = [p for p in self.params if p not in values]
        unknown = sorted(set(values) - set(self.params))
        raise TypeError(f"statement {self.name!r}: missing {missing}, unknown {unknown}")


def _picker(params: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``params`` from a mapping, as a tuple: one C-level
    itemgetter call, which costs about what building the tuple by hand did."""
    if len(params) > 1:
        pick: Callable[[Mapping[str, Any]], tuple[Any, ...]] = operator.itemgetter(*params)
        return pick

    def pick_each(values: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(values[p] for p in params)

    return pick_each


def parse(text: str) -> dict[str, str]:
    """Split one file into its named blocks (comment lines inside a block are kept)."""
    out: dict[str, str] = {}
    matches = list(_NAME.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[m.end() : end].strip()
        if m.group(1) in out:
            raise ValueError(f"duplicate query name {m.group(1)!r}")
        out[m.group(1)] = body
    return out


def _expand(blocks: dict[str, str]) -> dict[str, str]:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in blocks:
            raise KeyError(f"unknown SQL fragment {{{{{name}}}}}")
        return blocks[name]

    return {k: _INCLUDE.sub(sub, v) for k, v in blocks.items()}


def _blocks() -> dict[str, str]:
    folder = resources.files("taskyard.result_store").joinpath("sql")
    blocks: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".sql"):
            for name, body in parse(entry.read_text(encoding="utf-8")).items():
                if name in blocks:
                    raise ValueError(f"duplicate query name {name!r}")
                blocks[name] = body
    return blocks


def load() -> dict[str, str]:
    return _expand(_blocks())


STATEMENTS: dict[str, Statement] = {name: Statement.of(name, text) for name, text in load().items()}
# The text of each statement as asyncpg takes it (``$n`` parameters).
Q: dict[str, str] = {name: s.sql for name, s in STATEMENTS.items()}
# The blocks that are parts of statements (``{{name}}``), not statements of their own.
FRAGMENTS: frozenset[str] = frozenset(m for body in _blocks().values() for m in _INCLUDE.findall(body))


def bind(query: str, /, **values: Any) -> tuple[Any, ...]:
    """``(sql, *args)`` of a named statement, for a pool or connection:
    ``await pool.fetch(*bind("get_tasks", ids=ids))``."""
    statement = STATEMENTS[query]
    return (statement.sql, *statement.args(values))
