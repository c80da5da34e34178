"""A task's arguments and labels as typed on the command line (``task submit``, ``schedule create``)."""

from __future__ import annotations

import json
from typing import Any

import click


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
