"""The ``taskyard`` commands, read from the click group itself (for the CLI tests)."""

from __future__ import annotations

from collections.abc import Iterator

import click

from taskyard.cli.main import cli

# They run services in the foreground and print their logs, not data.
SERVICE_RUNNERS = frozenset({"dev", "serve", "queue start"})
# They write files on this machine and say which, calling no service: no reply to print
# (keys token prints the token it made, not a reply of the API).
FILE_WRITERS = frozenset({"keys new", "keys token"})


def leaf_commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from leaf_commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


ALL_COMMANDS = dict(leaf_commands(cli))
DATA_COMMANDS = sorted(name for name in ALL_COMMANDS if name not in SERVICE_RUNNERS | FILE_WRITERS)
