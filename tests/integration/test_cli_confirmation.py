"""Commands that remove data (or stop a whole tenant's work) ask first, and refuse at once when
no one can answer."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from integration.cli_commands import ALL_COMMANDS

from taskyard.cli.main import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

# Nothing listens on port 1: a command that called the gateway would end UNAVAILABLE (5).
NOWHERE = "127.0.0.1:1"
DESTRUCTIVE = {
    # Dead letters are deleted with their logs, past any redrive.
    "failures purge": ["--group", "0123456789abcdef"],
    # A forced delete takes the limit away from the tasks that use it.
    "limit delete": ["api"],
    "queue clear": ["reports"],
    "queue purge": ["--older-than", "7d"],
    "schedule delete": ["nightly"],
    # Not removal, but it stops a whole tenant's work and refuses its submissions.
    "tenant suspend": ["acme"],
}


def test_the_commands_that_remove_data_are_the_ones_that_ask() -> None:
    asking = {
        name for name, command in ALL_COMMANDS.items() if any("--yes" in p.opts for p in command.params)
    }
    assert asking == set(DESTRUCTIVE)


@pytest.mark.parametrize("command", sorted(DESTRUCTIVE))
def test_without_a_terminal_and_without_yes_nothing_is_called(command: str) -> None:
    result = CliRunner().invoke(cli, [*command.split(), *DESTRUCTIVE[command], "--target", NOWHERE])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert (
        result.stderr
        == f"error: cli {command} asks for confirmation and there is no terminal to ask on: pass --yes\n"
    )


def _ask_on_a_terminal(target: str, answer: bytes, *command: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``taskyard COMMAND`` with a terminal as stdin and stderr, and answer its question."""
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "taskyard.cli", *command, "--target", target],
            stdin=terminal,
            stderr=terminal,
            stdout=subprocess.PIPE,
        )
        seen = b""
        while b"[y/N]" not in seen:
            # Each read waits for the next output; a CLI that fell silent or exited fails here.
            ready, _, _ = select.select([controller], [], [], 30)
            assert ready and proc.poll() is None, seen
            seen += os.read(controller, 1024)
        os.write(controller, answer + b"\n")
        out, _ = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, seen)
    finally:
        os.close(controller)
        os.close(terminal)


def test_on_a_terminal_the_question_decides(cluster: Any) -> None:
    with cluster.client() as client:
        made = client.schedules.create("nightly", "add", 1, 2, every=3600)
        kept = _ask_on_a_terminal(cluster.target, b"n", "schedule", "delete", "nightly")
        assert kept.returncode == 1 and kept.stdout == b""
        assert b"Delete schedule nightly?" in kept.stderr
        assert client.schedules.get(made.id).name == "nightly"
        deleted = _ask_on_a_terminal(cluster.target, b"y", "schedule", "delete", "nightly")
        assert deleted.returncode == 0 and deleted.stdout == b"deleted nightly\n"
        assert [s.id for s in client.schedules] == []
