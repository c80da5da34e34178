"""The documented install lines, run exactly as written.

Every fenced block that follows an ``<!-- install-lines: NAME -->`` comment in the README or
a client's README is a user's path: the checkout's ``taskyard`` from a new shell, and each
client installed from a clone into a new project of its language (a new virtualenv, npm
project, Go module, Maven project). The clone is a copy of this working tree's clients
(tracked files and new ones git does not ignore), so the lines run against what is on disk.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.tools import require_tool

# Each test's limit is above the sum of the limits of what it runs (a block's
# BLOCK_TIMEOUT, a virtualenv's 120 s), so that with cold caches the step that is slow
# says so itself; the suite's default --timeout (Makefile) would cut it first.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
# A marked block: the comment, then the fence on the next line.
MARKED_BLOCK = re.compile(
    r"^<!-- install-lines: (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<body>.*?)^```$", re.M | re.S
)
# The README's table of clients: the Python row's install cell.
PYTHON_ROW = re.compile(r"^\| Python \| `(?P<line>[^`]+)` \|", re.M)
# Long enough for a cold cache of each toolchain's downloads (Maven's is about 2 minutes).
BLOCK_TIMEOUT = 280.0


def marked_blocks(doc: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in MARKED_BLOCK.finditer(doc.read_text()):
        assert match["name"] not in found, f"{doc}: two blocks marked install-lines: {match['name']}"
        found[match["name"]] = match["body"]
    return found


def block(doc: str, name: str) -> str:
    blocks = marked_blocks(ROOT / doc)
    assert name in blocks, f"{doc} has no block marked <!-- install-lines: {name} --> (has {sorted(blocks)})"
    return blocks[name]


def clean_env(**extra: str) -> dict[str, str]:
    """A new shell's environment: no virtualenv active, the checkout's .venv not on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != VENV_BIN.resolve()]
    env["PATH"] = os.pathsep.join(path)
    # Never a newer Go toolchain download: build with the one installed.
    env["GOTOOLCHAIN"] = "local"
    env.update(extra)
    return env


def run_lines(lines: str, cwd: Path, env: dict[str, str]) -> str:
    """Run documentation lines in bash as given, stopping at the first that fails."""
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", lines],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )
    output = f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode == 0, f"exit {done.returncode} running in {cwd}:\n{lines}\n{output}"
    return done.stdout


def clone_clients(dest: Path) -> Path:
    """A copy of clients/ as a clone of this working tree would have it (no builds, no node_modules)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "clients"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():  # a file deleted in the working tree is still listed
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def new_virtualenv(where: Path) -> dict[str, str]:
    """A new virtualenv (the interpreter the checkout's runs on) and a shell with it activated."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(where)], check=True, timeout=120)
    env = clean_env(VIRTUAL_ENV=str(where))
    env["PATH"] = f"{where / 'bin'}{os.pathsep}{env['PATH']}"
    return env


def imported_from(env: dict[str, str], cwd: Path) -> Path:
    out = run_lines('python -c "import taskyard.client as c; print(c.__file__)"', cwd, env)
    return Path(out.strip())


# --- the checkout's taskyard in a new shell -------------------------------------------


def test_readme_shell_lines_give_taskyard_in_a_new_shell() -> None:
    lines = block("README.md", "shell")
    env = clean_env()
    before = shutil.which("taskyard", path=env["PATH"])
    assert before is None or Path(before).parent.resolve() != VENV_BIN.resolve()
    # The lines as written, from the checkout's root, then what a user does next in that shell.
    out = run_lines(
        lines + '\ncommand -v taskyard\npython -c "import taskyard.cli, sys; print(sys.prefix)"\n', ROOT, env
    )
    assert "Usage: taskyard" in out, out
    *_, command, prefix = out.strip().splitlines()
    assert Path(command) == VENV_BIN / "taskyard", out
    assert Path(prefix).resolve() == (ROOT / ".venv").resolve(), out


def test_wrapper_without_a_virtualenv_says_what_to_run(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "bin").mkdir(parents=True)
    shutil.copy2(ROOT / "bin" / "taskyard", checkout / "bin" / "taskyard")
    done = subprocess.run(
        ["bash", "-c", "bin/taskyard --help"], cwd=checkout, env=clean_env(), capture_output=True, text=True
    )
    assert done.returncode == 1, done
    assert "run make dev or make install first" in done.stderr, done.stderr
    assert str(checkout / ".venv") in done.stderr, done.stderr


# --- the clients, each into a new project from a clone --------------------------------


@pytest.mark.timeout(700)  # 120 s venv + 2 runs of BLOCK_TIMEOUT
def test_readme_python_line_installs_the_client_into_a_new_virtualenv(tmp_path: Path) -> None:
    match = PYTHON_ROW.search((ROOT / "README.md").read_text())
    assert match, "README.md's clients table has no Python row with an install line"
    clone = clone_clients(tmp_path / "clone")
    venv = tmp_path / "venv"
    env = new_virtualenv(venv)
    run_lines(match["line"], clone, env)
    assert imported_from(env, tmp_path).is_relative_to(venv)


@pytest.mark.timeout(1000)  # 120 s venv + 3 runs of BLOCK_TIMEOUT
def test_python_client_readme_lines(tmp_path: Path) -> None:
    clone = clone_clients(tmp_path / "clone")
    project = tmp_path / "project"
    project.mkdir()
    venv = tmp_path / "venv"
    env = new_virtualenv(venv)
    env["TASKYARD"] = str(clone)
    out = run_lines(block("clients/python/README.md", "python"), project, env)
    assert "taskyard.client" in out, out
    assert imported_from(env, project).is_relative_to(venv)
    # The tracing extra, in the same project.
    out = run_lines(block("clients/python/README.md", "python-tracing"), project, env)
    assert out.strip().splitlines()[-1] == "tracing", out


@pytest.mark.timeout(600)  # 2 runs of BLOCK_TIMEOUT
def test_typescript_client_readme_lines(tmp_path: Path) -> None:
    require_tool("npm")
    clone = clone_clients(tmp_path / "clone")
    project = tmp_path / "project"
    project.mkdir()
    env = clean_env(TASKYARD=str(clone))
    run_lines("npm init -y >/dev/null", project, env)
    out = run_lines(block("clients/typescript/README.md", "typescript"), project, env)
    assert out.strip().splitlines()[-1] == "function", out
    installed = project / "node_modules" / "@taskyard" / "client"
    assert (installed / "package.json").is_file() and not installed.is_symlink()


GO_PROGRAM = """package main

import (
\t"fmt"

\ttaskyard "github.com/taskyard/taskyard/clients/go"
)

func main() {
\t_, err := taskyard.New("localhost:50051", taskyard.WithInsecure())
\tfmt.Println(err == nil)
}
"""


@pytest.mark.timeout(900)  # 3 runs of BLOCK_TIMEOUT
def test_go_client_readme_lines(tmp_path: Path) -> None:
    require_tool("go")
    clone = clone_clients(tmp_path / "clone")
    module = tmp_path / "app"
    module.mkdir()
    env = clean_env(TASKYARD=str(clone))
    run_lines("go mod init example.com/app", module, env)
    (module / "main.go").write_text(GO_PROGRAM)
    run_lines(block("clients/go/README.md", "go"), module, env)
    assert f"=> {clone / 'clients' / 'go'}" in (module / "go.mod").read_text()
    # New dials lazily: a client is made without a gateway.
    assert run_lines("go run .", module, env).strip() == "true"


JAVA_PROGRAM = """import dev.taskyard.client.TaskyardClient;

public class App {
  public static void main(String[] args) {
    try (TaskyardClient client = TaskyardClient.builder("localhost:50051").plaintext().build()) {
      System.out.println(client != null);
    }
  }
}
"""


def java_plugin_version(artifact: str) -> str:
    """The version clients/java builds with, which its install leaves in the local repository."""
    pom = (ROOT / "clients" / "java" / "pom.xml").read_text()
    found = re.search(rf"<artifactId>{artifact}</artifactId>\s*<version>([^<]+)</version>", pom)
    assert found, f"clients/java/pom.xml pins no {artifact}"
    return found[1]


def java_project(dependency: str) -> str:
    plugins = "".join(
        f"<plugin><groupId>org.apache.maven.plugins</groupId><artifactId>{a}</artifactId>"
        f"<version>{java_plugin_version(a)}</version></plugin>"
        for a in ("maven-compiler-plugin", "maven-resources-plugin")
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>app</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
{dependency}
  </dependencies>
  <build><plugins>{plugins}</plugins></build>
</project>
"""


@pytest.mark.timeout(600)  # 2 runs of BLOCK_TIMEOUT
def test_java_client_readme_lines(tmp_path: Path) -> None:
    """`mvn install` puts the clone's client into the local repository (~/.m2, as for a
    user), and a new Maven project with the README's dependency compiles against it offline."""
    require_tool("mvn")
    require_tool("java")
    clone = clone_clients(tmp_path / "clone")
    project = tmp_path / "app"
    sources = project / "src" / "main" / "java"
    sources.mkdir(parents=True)
    env = clean_env(TASKYARD=str(clone))
    run_lines(block("clients/java/README.md", "java"), project, env)
    (project / "pom.xml").write_text(java_project(block("clients/java/README.md", "java-dependency")))
    (sources / "App.java").write_text(JAVA_PROGRAM)
    run_lines("mvn -o -B -q compile", project, env)
    assert (project / "target" / "classes" / "App.class").is_file()
