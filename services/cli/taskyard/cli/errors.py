"""How a failed command ends: one ``error: ...`` line on stderr and an exit status by kind.

Exit status:

- 1: the gateway refused or failed the request (any gRPC status but UNAVAILABLE);
- 2: bad command-line usage, or a destructive command run without a terminal
  to confirm on and without ``--yes``;
- 3: the awaited task ended FAILURE or CANCELLED;
- 4: the wait ended before the task was final;
- 5: the gateway could not be reached (UNAVAILABLE): trying again later may work;
- 141: whoever read the output stopped early (``| head``), as for a process SIGPIPE ends.

Errors are reported in exactly one place, ``CommandGroup.invoke``: commands
raise, they never print an error themselves.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click
import grpc

from taskyard.client import TaskyardError

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TASK_FAILED = 3
EXIT_TIMED_OUT = 4
EXIT_UNAVAILABLE = 5
EXIT_BROKEN_PIPE = 141


def describe(exc: TaskyardError) -> list[str]:
    """The lines printed for ``exc``: ``error: CODE (REASON): message``, then one per bad field."""
    violations = [f"  - {v.field}: {v.description}" for v in exc.violations]
    message = exc.message
    # The gateway's message for INVALID_ARGUMENT repeats the violations: say them once.
    if violations and message == "; ".join(f"{v.field}: {v.description}" for v in exc.violations[:5]):
        count = len(violations)
        message = f"{count} invalid field{'s' if count != 1 else ''}"
    reason = f" ({exc.reason})" if exc.reason and exc.reason != exc.code.name else ""
    return [f"error: {exc.code.name}{reason}: {message}", *violations]


def exit_status(exc: TaskyardError) -> int:
    return EXIT_UNAVAILABLE if exc.code is grpc.StatusCode.UNAVAILABLE else EXIT_ERROR


def fail(message: str, status: int = EXIT_ERROR) -> NoReturn:
    """End the command with ``error: message`` (for refusals found by the CLI itself)."""
    raise CommandFailed(message, status)


class CommandFailed(click.ClickException):
    """A refusal the CLI makes on its own, printed like the gateway's errors."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        # click declares exit_code on the class; each refusal carries its own.
        vars(self)["exit_code"] = status

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


class CommandGroup(click.Group):
    """A group whose commands' gateway errors end the way the module docstring says."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except grpc.RpcError as err:
            self._report(ctx, TaskyardError.from_rpc_error(err))
        except TaskyardError as exc:
            self._report(ctx, exc)
        except BrokenPipeError:
            # No one reads any more: no traceback, and no second failure when Python flushes at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(EXIT_BROKEN_PIPE)

    @staticmethod
    def _report(ctx: click.Context, exc: TaskyardError) -> NoReturn:
        for line in describe(exc):
            click.echo(line, err=True)
        ctx.exit(exit_status(exc))
