"""What the runtime image installs, resolved by pip itself: deploy/Dockerfile's COPY lines
copied into a build context as the image has it, and its `pip install` line run there with
--dry-run --report in a new virtualenv. No Docker engine is needed (there is none here);
pip resolves against the package index as the image build does. The embedded PostgreSQL
(pgserver) that only `taskyard dev` needs must not be among what it installs."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

# Above its steps' own limits (a virtualenv's 120 s, PIP_TIMEOUT), so that with cold caches
# pip's limit says so first; the suite's default --timeout (Makefile) would cut it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(450)]

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy/Dockerfile"
# A cold pip cache builds the package's metadata and resolves about 55 distributions.
PIP_TIMEOUT = 280.0


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _build_context(into: Path) -> tuple[Path, list[str]]:
    """The image's WORKDIR as the Dockerfile fills it before its install, and the words of
    its `pip install` command."""
    workdir = into
    install: list[str] = []
    for word, args in _instructions(DOCKERFILE.read_text()):
        if word == "WORKDIR" and not install:
            workdir = into / args.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif word == "COPY" and not install:
            *sources, target = shlex.split(args)
            for source in sources:
                destination = workdir / target / (Path(source).name if target.endswith("/") else "")
                if (ROOT / source).is_dir():
                    shutil.copytree(
                        ROOT / source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
                    )
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(ROOT / source, destination)
        elif word == "RUN" and "pip install" in args:
            (command,) = [c for c in args.split("&&") if shlex.split(c)[:2] == ["pip", "install"]]
            install = shlex.split(command)
    assert install, "deploy/Dockerfile has no `pip install` line"
    return workdir, install


def test_the_images_pip_install_resolves_without_the_embedded_postgresql(tmp_path: Path) -> None:
    workdir, install = _build_context(tmp_path / "image")
    assert install == ["pip", "install", "."]  # the package, no extra
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [str(venv / "bin/python"), "-m", *install, "--dry-run", "--quiet", "--report", str(report)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    installed = {canonicalize_name(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
    assert {"taskyard", "grpcio", "pynng", "asyncpg", "aiohttp"} <= installed
    assert "pgserver" not in installed
