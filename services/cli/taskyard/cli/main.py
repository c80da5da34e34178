"""The ``taskyard`` command."""

from __future__ import annotations

import click

from taskyard.cli import explain as _explain  # noqa: F401  (registers `task explain`)
from taskyard.cli import logs as _logs  # noqa: F401  (registers `task logs`)
from taskyard.cli import tree as _tree  # noqa: F401  (registers `task tree`)
from taskyard.cli.dev import dev_command
from taskyard.cli.queue import queue_group
from taskyard.cli.queue_start import queue_start_command
from taskyard.cli.schedule import schedule_group
from taskyard.cli.serve import serve_command
from taskyard.cli.task import task_group


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="taskyard", prog_name="taskyard")
def cli() -> None:
    """Taskyard: a distributed task queue (gRPC edge, NNG inside, PostgreSQL custody)."""


cli.add_command(dev_command)
cli.add_command(serve_command)
cli.add_command(task_group)
cli.add_command(queue_group)
cli.add_command(schedule_group)
queue_group.add_command(queue_start_command)  # supervision slice: `queue start`


def main() -> None:
    cli(prog_name="taskyard")


if __name__ == "__main__":
    main()
