"""A task's arguments and labels as typed on the command line (``task submit``, ``schedule create``)."""

from __future__ import annotations

import json
from typing import Any

import click

from taskyard.client import LimitUse
from taskyard.core import limits as rules


def json_arg(text: str) -> Any:
    """A positional task argument: JSON when it parses (2, "x", [1], {"a": 1},
    true, null), else the text itself as a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_kwargs(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--kwargs") from exc
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--kwargs")
    return value


def parse_labels(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    """``--label team=billing --label env=prod`` -> {"team": "billing", "env": "prod"}."""
    labels: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{text!r}: use KEY=VALUE", param_hint="--label")
        labels[key.strip()] = value
    return labels


def parse_limits(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> tuple[LimitUse, ...]:
    """``--limit api --limit per-customer=customer:42 --limit 'tokens*500=c:42'``: a limit's name,
    optionally ``*UNITS``, optionally ``=KEY``. A name never holds '*' or '=', a key may hold
    anything (``customer:42``, even '='): the first '=' ends the name."""
    uses: list[LimitUse] = []
    for text in values:
        head, sep, key = text.partition("=")
        name, star, count = head.partition("*")
        if not name:
            raise click.BadParameter(f"{text!r}: use NAME, NAME=KEY or NAME*UNITS=KEY", param_hint="--limit")
        units = 0
        if star:
            # ASCII digits only: '²'.isdigit() is true, and int('²') raises.
            if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= rules.MAX_UNITS:
                raise click.BadParameter(
                    f"{text!r}: UNITS in NAME*UNITS is a whole number from 1 to {rules.MAX_UNITS}",
                    param_hint="--limit",
                )
            units = int(count)
        uses.append(LimitUse(limit=name, key=key if sep else "", units=units))
    return tuple(uses)
