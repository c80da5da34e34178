"""Generated code is fenced: .gitattributes marks every committed generated file
linguist-generated (folded in review, out of the language statistics) and nothing else.

What is generated is read from the generators themselves, not from .gitattributes:
tools/gen.sh's Python step (grpc_tools.protoc's stub names, one folder per proto package),
buf.gen.yaml's plugins (each output folder; Java's, which it shares with the hand-written
client, narrowed to the packages managed mode gives) and the Makefile's rendered
Kubernetes manifests. `git check-attr` evaluates the patterns, as GitHub does."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ATTRIBUTE = "linguist-generated"
# The plugins of buf.gen.yaml that write Java: their out folder holds hand-written code too.
JAVA_PLUGINS = {("protoc_builtin", "java"), ("local", "protoc-gen-grpc-java")}


def git(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> str:
    # Only the repository's .gitattributes counts, not a developer's own attributes file (the
    # rest of their configuration stays: safe.directory lets a container's git read the tree).
    command = ["git", "-c", f"core.attributesFile={os.devnull}", *args]
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def tracked() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return [path for path in git("ls-files", "-z").split("\0") if path]


def proto_package_dirs(under: str = ".") -> set[PurePosixPath]:
    """Each folder of protos/ (or of its folder UNDER) holding a .proto, relative to protos/
    (gen.sh's proto_package_dirs)."""
    protos = ROOT / "protos"
    dirs = {PurePosixPath(p.parent.relative_to(protos).as_posix()) for p in protos.rglob("*.proto")}
    return {d for d in dirs if under == "." or d.is_relative_to(under)}


def python_generated(tracked: list[str]) -> set[str]:
    """gen_python's stubs: its out folder, one subfolder per proto package, files by name."""
    script = (ROOT / "tools" / "gen.sh").read_text()
    body = re.search(r"^gen_python\(\) \{\n(.*?)^\}", script, re.M | re.S)
    assert body, "tools/gen.sh has no gen_python function"
    out = re.search(r'local out="\$OUT_ROOT/([^"]+)"', body.group(1))
    names = re.findall(r"-name '([^']+)'", body.group(1))
    assert out and names, "gen_python's out folder or stub names not found in tools/gen.sh"
    dirs = {PurePosixPath(out.group(1)) / d for d in proto_package_dirs()}
    return {
        path
        for path in tracked
        if PurePosixPath(path).parent in dirs
        and any(fnmatch.fnmatchcase(PurePosixPath(path).name, n) for n in names)
    }


def buf_generated_roots() -> set[PurePosixPath]:
    """Folders buf generate writes only generated code into."""
    config: dict[str, Any] = yaml.safe_load((ROOT / "buf.gen.yaml").read_text())
    overrides = (config.get("managed") or {}).get("override") or []
    java_prefix = next((o["value"] for o in overrides if o.get("file_option") == "java_package_prefix"), None)
    input_packages: set[PurePosixPath] = set()
    for source in config["inputs"]:
        directory = PurePosixPath(source["directory"])
        for path in source.get("paths") or [str(directory)]:
            under = PurePosixPath(path).relative_to(directory).as_posix()
            input_packages |= proto_package_dirs(under)
    roots = set()
    for plugin in config["plugins"]:
        out = PurePosixPath(plugin["out"])
        if any(plugin.get(key) == name for key, name in JAVA_PLUGINS):
            # Managed mode's java_package: the prefix, then the proto package.
            assert java_prefix, "Java plugins without managed mode's java_package_prefix"
            prefix = PurePosixPath(*java_prefix.split("."))
            roots |= {out / prefix / package for package in input_packages}
        else:
            roots.add(out)
    return roots


def make_rendered() -> set[str]:
    """Files the Makefile renders and commits (make k8s-manifests)."""
    makefile = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^K8S_MANIFESTS\s*:?=\s*(.+?)\s*$", makefile, re.M))


@pytest.fixture(scope="module")
def generated(tracked: list[str]) -> set[str]:
    python = python_generated(tracked)
    roots = buf_generated_roots()
    buf = {path for path in tracked if any(PurePosixPath(path).is_relative_to(r) for r in roots)}
    rendered = make_rendered()
    # An empty part means a derivation went wrong (a renamed variable), not that all is fenced.
    assert python, "no Python stubs found from tools/gen.sh"
    assert buf, "no buf output found from buf.gen.yaml"
    assert rendered and rendered <= set(tracked), f"Makefile's K8S_MANIFESTS not tracked: {rendered}"
    return python | buf | rendered


def marked(paths: list[str], cwd: Path = ROOT) -> set[str]:
    """The paths whose linguist-generated attribute git sets (the files need not exist)."""
    out = git("check-attr", "--stdin", "-z", ATTRIBUTE, cwd=cwd, stdin="\0".join(paths)).split("\0")
    fields = zip(out[0::3], out[1::3], out[2::3], strict=False)
    return {path for path, _, value in fields if value not in ("unspecified", "unset", "false")}


def test_every_generated_file_is_marked(tracked: list[str], generated: set[str]) -> None:
    unmarked = sorted(generated - marked(tracked))
    assert not unmarked, f"generated but not {ATTRIBUTE} in .gitattributes: {unmarked[:20]}"


def test_no_hand_written_file_is_marked(tracked: list[str], generated: set[str]) -> None:
    wrongly = sorted(marked(tracked) - generated)
    assert not wrongly, f"{ATTRIBUTE} in .gitattributes but not generated: {wrongly[:20]}"


def test_every_pattern_matches_a_file(tracked: list[str], tmp_path: Path) -> None:
    # Each line alone in an empty repository's .gitattributes: check-attr needs no files.
    lines = (ROOT / ".gitattributes").read_text().splitlines()
    rules = [line for line in lines if line.strip() and not line.startswith("#")]
    assert rules, ".gitattributes has no rules"
    git("init", "-q", str(tmp_path))
    dead = []
    for rule in rules:
        (tmp_path / ".gitattributes").write_text(rule + "\n")
        if ATTRIBUTE in rule and not marked(tracked, cwd=tmp_path):
            dead.append(rule)
    assert not dead, f".gitattributes lines that match no tracked file: {dead}"
