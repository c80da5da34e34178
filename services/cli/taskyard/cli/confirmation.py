"""Commands that remove data ask first: ``--yes`` to skip the question.

Without a terminal to ask on (a script, a pipe, CI) and without ``--yes`` the
command refuses at once, exit status 2, rather than wait for an answer no one
can give. The question goes to stderr, so stdout holds only the output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from taskyard.cli.errors import EXIT_USAGE, fail

F = TypeVar("F", bound=Callable[..., Any])


def yes_option(func: F) -> F:
    return click.option("--yes", "-y", "yes", is_flag=True, help="Do not ask for confirmation.")(func)


def confirm(question: str, *, yes: bool) -> None:
    """Go on when ``yes`` or the person at the terminal agrees; else stop the command."""
    if yes:
        return
    if not sys.stdin.isatty():
        command = click.get_current_context().command_path
        fail(f"{command} asks for confirmation and there is no terminal to ask on: pass --yes", EXIT_USAGE)
    click.confirm(question, abort=True, err=True)
