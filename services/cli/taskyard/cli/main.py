"""The ``taskyard`` command."""

from __future__ import annotations

import click

# Each of these registers its command on the `task` group.
from taskyard.cli import explain as _explain  # noqa: F401
from taskyard.cli import logs as _logs  # noqa: F401
from taskyard.cli import submit as _submit  # noqa: F401
from taskyard.cli import task_list as _task_list  # noqa: F401
from taskyard.cli import tree as _tree  # noqa: F401
from taskyard.cli.connection import tenant_option
from taskyard.cli.dev import dev_command
from taskyard.cli.errors import CommandGroup
from taskyard.cli.failures import failures_group
from taskyard.cli.keys import keys_group
from taskyard.cli.limit import limit_group
from taskyard.cli.queue import queue_group
from taskyard.cli.queue_start import queue_start_command
from taskyard.cli.redrive import redrive_group
from taskyard.cli.schedule import schedule_group
from taskyard.cli.serve import serve_command
from taskyard.cli.task import task_group
from taskyard.cli.tenant import tenant_group


@click.group(
    cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(package_name="taskyard", prog_name="taskyard")
@tenant_option
def cli() -> None:
    """Taskyard: a distributed task queue (gRPC edge, NNG inside, PostgreSQL custody)."""


cli.add_command(dev_command)
cli.add_command(serve_command)
cli.add_command(task_group)
cli.add_command(queue_group)
cli.add_command(schedule_group)
cli.add_command(limit_group)
cli.add_command(keys_group)
cli.add_command(failures_group)
cli.add_command(redrive_group)
cli.add_command(tenant_group)
queue_group.add_command(queue_start_command)


def main() -> None:
    cli(prog_name="taskyard")


if __name__ == "__main__":
    main()
