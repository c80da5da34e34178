"""Named SQL: every statement of the store lives in ``sql/*.sql`` as
``-- name: x`` blocks, parsed once at import.

``{{name}}`` inside a block expands to the block called ``name`` (used for the
column list of a full task record).
"""

from __future__ import annotations

import re
from importlib import resources

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_INCLUDE = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


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


def load() -> dict[str, str]:
    folder = resources.files("taskyard.result_store").joinpath("sql")
    blocks: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".sql"):
            for name, body in parse(entry.read_text(encoding="utf-8")).items():
                if name in blocks:
                    raise ValueError(f"duplicate query name {name!r}")
                blocks[name] = body
    return _expand(blocks)


Q: dict[str, str] = load()
