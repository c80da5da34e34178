"""The runtime image (deploy/Dockerfile) installs the base package only: not the embedded
PostgreSQL (pgserver, 34 MB) that only `taskyard dev` needs. There is no container engine
here, so the Dockerfile's install line is read, and what pip would install for it is
resolved from the packages' own metadata: the requirements pyproject.toml gives that line,
followed through the metadata of the installed distributions (this virtualenv has every
extra, so it holds every candidate)."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy/Dockerfile"
PROJECT = "taskyard"


def _run_instructions(text: str) -> list[str]:
    """The Dockerfile's RUN instructions, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    return [line.strip()[4:] for line in joined.splitlines() if line.strip().startswith("RUN ")]


def _pip_install_targets(text: str) -> list[str]:
    """What each `pip install` of the Dockerfile installs (its arguments but options)."""
    targets: list[str] = []
    for instruction in _run_instructions(text):
        for command in re.split(r"&&|;|\|\|", instruction):
            words = shlex.split(command)
            if words[:2] == ["pip", "install"] or (words[1:3] == ["-m", "pip"] and words[3:4] == ["install"]):
                targets += [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
    return targets


def _wanted(texts: list[str], extras: set[str]) -> list[Requirement]:
    """The requirements whose markers hold for this interpreter, with these extras asked for."""
    reqs = [Requirement(t) for t in texts]
    return [
        r for r in reqs if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in extras | {""})
    ]


def _closure(requirement: str, pyproject: str) -> set[str]:
    """Every distribution pip installs for ``requirement`` (the project, with extras or
    not), by canonical name: the project's requirements as ``pyproject`` (the text of
    pyproject.toml) gives them, then each distribution's own, from its installed metadata."""
    project = tomllib.loads(pyproject)["project"]
    wanted, seen = [Requirement(requirement)], set[str]()
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        if name == PROJECT:  # `pip install .` reads the checkout's pyproject.toml
            wanted += _wanted(project["dependencies"], set())
            for extra in req.extras:
                wanted += _wanted(project["optional-dependencies"][extra], {extra})
            continue
        if name in seen:
            continue
        seen.add(name)
        wanted += _wanted(importlib.metadata.distribution(name).requires or [], set(req.extras))
    return seen


def test_the_image_installs_the_base_package_without_an_extra() -> None:
    # `pip install .`: the checkout's package with no [extra]; nothing else is installed.
    assert _pip_install_targets(DOCKERFILE.read_text()) == ["."]


def test_the_base_package_does_not_pull_the_embedded_postgresql() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    runtime = _closure(PROJECT, pyproject)
    assert "pgserver" not in runtime
    assert {"grpcio", "pynng", "asyncpg", "aiohttp"} <= runtime  # what the services do run on
    # The same resolution finds it where it belongs: `taskyard dev`'s extra, and [dev].
    assert "pgserver" in _closure(f"{PROJECT}[embedded]", pyproject)
    assert "pgserver" in _closure(f"{PROJECT}[dev]", pyproject)


def test_the_install_line_is_read_as_pip_reads_it() -> None:
    dockerfile = (
        "FROM python:3.11-slim\n"
        "# RUN pip install ignored\n"
        "RUN pip install --no-cache-dir '.[embedded]' \\\n    && rm -rf /src\n"
        "RUN python -m pip install -U pip\n"
    )
    assert _pip_install_targets(dockerfile) == [".[embedded]", "pip"]
