"""The README's grpcurl session is a transcript of a real run, checked against one.

Every ``$ grpcurl ...`` command of the README's "A session with grpcurl" blocks runs
as written against a real cluster, with ``localhost:50051`` replaced by the cluster's
gateway and each task id of the transcript by the id this run got in its place (ids
are paired by order of appearance in the outputs). What each command prints (stdout,
then stderr) must be what the README shows, once task ids, timestamps, durations and
worker ids are normalised.

When the output changes on purpose, rewrite the blocks from a live run:

    TASKYARD_UPDATE_README=1 python -m pytest tests/acceptance/test_readme_grpcurl.py
    make readme                                  # the same
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import grpcurl

README = Path(__file__).resolve().parents[2] / "README.md"
README_TARGET = "localhost:50051"
SESSION_HEADING = "\n## A session with grpcurl"
UPDATE_VARIABLE = "TASKYARD_UPDATE_README"
# The body of a console block (group 1), fences excluded.
CONSOLE_BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# What differs from run to run besides ids, with what stands in for it.
VARYING = (
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z"), "<timestamp>"),
    (re.compile(r'"-?\d+(?:\.\d+)?s"'), '"<duration>"'),
    (re.compile(r'("worker_id": )"[^"]*"'), r'\1"<worker>"'),
)


@dataclass(frozen=True)
class Step:
    command: str  # after the "$ " prompt
    output: str  # the lines after it, up to the next prompt or the end of the block


@dataclass(frozen=True)
class Block:
    start: int  # offsets of the block's body in the README
    end: int
    steps: tuple[Step, ...]

    def body(self) -> str:
        return "".join(f"$ {s.command}\n" + (f"{s.output}\n" if s.output else "") for s in self.steps)


def session_span(text: str) -> tuple[int, int]:
    """The README's "A session with grpcurl" section (the API section has its own test)."""
    start = text.index(SESSION_HEADING)
    return start, text.index("\n## ", start + 1)


def session_blocks(text: str) -> list[Block]:
    """The section's console blocks that run grpcurl, each split into its commands."""
    start, end = session_span(text)
    blocks: list[Block] = []
    for match in CONSOLE_BLOCK.finditer(text, start, end):
        steps: list[Step] = []
        for chunk in re.split(r"^\$ ", match.group(1), flags=re.MULTILINE)[1:]:
            command, _, output = chunk.partition("\n")
            steps.append(Step(command, output.rstrip("\n")))
        if any(s.command.startswith("grpcurl ") for s in steps):
            blocks.append(Block(match.start(1), match.end(1), tuple(steps)))
    return blocks


def readme_steps() -> list[Step]:
    return [step for block in session_blocks(README.read_text()) for step in block.steps]


def normalised(steps: list[Step]) -> str:
    """The transcript with ids numbered by first appearance and the rest of what
    varies replaced, so two runs of the same session compare equal."""
    text = "".join(f"$ {s.command}\n{s.output}\n" for s in steps)
    numbers: dict[str, int] = {}
    text = UUID.sub(lambda m: f"<id-{numbers.setdefault(m.group(0), len(numbers) + 1)}>", text)
    for pattern, stand_in in VARYING:
        text = pattern.sub(stand_in, text)
    return text


def unique_ids(text: str) -> list[str]:
    return list(dict.fromkeys(UUID.findall(text)))


def run_session(cluster: Any, steps: list[Step]) -> list[Step]:
    """Run each command against ``cluster``; the commands come back as they ran, with
    this run's ids, and the outputs as grpcurl printed them."""
    live_ids: dict[str, str] = {}
    ran: list[Step] = []
    for step in steps:
        command = UUID.sub(lambda m: live_ids.get(m.group(0), m.group(0)), step.command)
        argv = shlex.split(command)
        assert argv[0] == "grpcurl", command
        args = [cluster.target if a == README_TARGET else a for a in argv[1:]]
        proc = grpcurl.run_raw(args, check=False)
        output = (proc.stdout + proc.stderr).rstrip("\n")
        # grpcurl exits with 64 + the gRPC status code when the call is refused.
        assert (proc.returncode != 0) == output.startswith("ERROR:"), (command, proc.returncode, output)
        for shown, live in zip(unique_ids(step.output), unique_ids(output), strict=False):
            live_ids.setdefault(shown, live)
        ran.append(Step(command, output))
    return ran


def rewrite_readme(ran: list[Step]) -> None:
    text = README.read_text()
    blocks = session_blocks(text)
    pieces: list[str] = []
    pos = 0
    remaining = iter(ran)
    for block in blocks:
        fresh = Block(block.start, block.end, tuple(next(remaining) for _ in block.steps))
        pieces += [text[pos : block.start], fresh.body()]
        pos = block.end
    README.write_text("".join([*pieces, text[pos:]]))


def test_readme_lists_the_session() -> None:
    steps = readme_steps()
    methods = [shlex.split(s.command)[-1] for s in steps]
    assert methods == [
        "list",
        "taskyard.v1.TaskService",  # describe
        "taskyard.v1.TaskService/SubmitTask",
        "taskyard.v1.TaskService/WaitTask",
        "taskyard.v1.TaskService/RunTask",
        "taskyard.v1.TaskService/SubmitTask",
    ], steps
    assert all(README_TARGET in shlex.split(s.command) for s in steps)


def test_readme_grpcurl_session_matches_a_live_run(cluster: Any) -> None:
    shown = readme_steps()
    ran = run_session(cluster, shown)
    # A refused name writes nothing.
    assert cluster.count_tasks(name="no_such_task") == 0

    expected, actual = normalised(shown), normalised(ran)
    if expected == actual:
        return
    if os.environ.get(UPDATE_VARIABLE, "") not in ("", "0"):
        # Only on a real difference: fresh ids and times alone would be noise in a diff.
        rewrite_readme(ran)
        print("\nREADME.md: grpcurl session rewritten from this run")
        return
    diff = "\n".join(
        difflib.unified_diff(expected.splitlines(), actual.splitlines(), "README.md", "live run", lineterm="")
    )
    pytest.fail(
        "The README's grpcurl session is not what a live run prints (ids, timestamps, durations "
        "and worker ids normalised). If the change is meant, run\n"
        f"  {UPDATE_VARIABLE}=1 python -m pytest tests/acceptance/{Path(__file__).name}   (or: make readme)\n"
        f"and review the README's diff.\n\n{diff}",
        pytrace=False,
    )
