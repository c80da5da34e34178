"""The architecture rules of DESIGN.md, checked on every hand-written module's imports.

- Services (gateway, scheduler, result_store, worker_pool) never import each other: a
  service imports only taskyard.core, the generated taskyard.v1 / taskyard.bus.v1, and itself.
- taskyard.core imports no service (nor the CLI, client or examples).
- Only taskyard.result_store imports asyncpg.
- Only taskyard.gateway runs a gRPC server (calls grpc.server / grpc.aio.server).
- The core and the services behind the gateway do not import grpc at all (it costs each
  process, every worker too, 16 MiB; they use taskyard.core.errors.Code).
- The Python client (taskyard.client) imports only itself, taskyard.v1 and taskyard.worker.v1.
- The CLI may import the client and core (and generated code), not services.
- taskyard.examples (task functions for `taskyard dev`) may use the worker_pool's task API.

Packages and their folders come from [tool.setuptools.package-dir] in pyproject.toml, so a
new package is checked as soon as it is packaged, and a module outside every package fails.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = frozenset({"gateway", "scheduler", "result_store", "worker_pool"})
# taskyard.v1, taskyard.bus.v1, taskyard.worker.v1 (clients/python, generated)
GENERATED = frozenset({"v1", "bus", "worker"})
COMMON = frozenset({"core"}) | GENERATED

# Which taskyard.<top> packages each component may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    **{s: COMMON for s in SERVICES},
    "core": GENERATED,
    "cli": COMMON | {"client"},
    "client": frozenset({"v1", "worker"}),
    "examples": COMMON | {"worker_pool"},
}
WHY = {
    **{s: "services never import each other or the CLI/client" for s in SERVICES},
    "core": "taskyard.core is the shared kernel: it imports no service, CLI or client",
    "cli": "the CLI talks to services through the client or processes, never imports them",
    "client": "the Python client is standalone: only taskyard.v1, taskyard.worker.v1 and itself",
    "examples": "example tasks use only core, generated code and the worker-pool task API",
}
GRPC_FREE = frozenset({"core", "scheduler", "result_store", "worker_pool"})
ASYNCPG_OWNERS = frozenset({"result_store"})
GRPC_SERVER_OWNERS = frozenset({"gateway"})


@dataclasses.dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. taskyard.gateway.server
    component: str  # second part of the name: gateway, core, cli, ...
    path: Path
    is_package: bool


@dataclasses.dataclass(frozen=True)
class Import:
    target: str  # absolute dotted module (or module.attribute for from-imports)
    line: int


def packages() -> dict[str, Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dirs: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return {pkg: ROOT / folder for pkg, folder in dirs.items()}


def hand_written_modules() -> list[Module]:
    found: list[Module] = []
    for pkg, folder in sorted(packages().items()):
        component = pkg.split(".")[1]
        if component in GENERATED:
            continue
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found.append(
                Module(".".join([pkg, *parts]), component, path, is_package=path.name == "__init__.py")
            )
    return found


def imports_of(source: str, module: str, is_package: bool) -> Iterator[Import]:
    """Every module a source imports, relative imports made absolute. `from a import b`
    yields a.b (b may be a module or a name; the rules match prefixes, so both work)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield Import(base if alias.name == "*" else f"{base}.{alias.name}", node.lineno)
        elif (
            isinstance(node, ast.Call)
            and _dotted(node.func) in ("importlib.import_module", "import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield Import(node.args[0].value, node.lineno)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def grpc_server_calls(source: str) -> Iterator[int]:
    """Lines that create a gRPC server: grpc.server(...) / grpc.aio.server(...), through any alias."""
    tree = ast.parse(source)
    # Local names bound to the modules grpc / grpc.aio, or to their `server` functions.
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("grpc", "grpc.aio"):
                    # `import grpc.aio` binds grpc; `import grpc.aio as x` binds x to grpc.aio.
                    names[alias.asname or "grpc"] = alias.name if alias.asname else "grpc"
        elif isinstance(node, ast.ImportFrom) and node.module in ("grpc", "grpc.aio") and not node.level:
            for alias in node.names:
                if alias.name in ("aio", "server"):
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    servers = {"grpc.server", "grpc.aio.server"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            head, _, rest = dotted.partition(".")
            if head in names:
                resolved = names[head] + (f".{rest}" if rest else "")
                if resolved in servers:
                    yield node.lineno


def under(target: str, top: str) -> bool:
    return target == top or target.startswith(top + ".")


def violations() -> list[str]:
    out: list[str] = []
    for mod in hand_written_modules():
        source = mod.path.read_text()
        where = mod.path.relative_to(ROOT)
        for imp in imports_of(source, mod.name, mod.is_package):
            parts = imp.target.split(".")
            if parts[0] == "taskyard" and len(parts) > 1:
                other = parts[1]
                if other != mod.component and other not in ALLOWED.get(mod.component, frozenset()):
                    out.append(
                        f"{where}:{imp.line}: {mod.name} imports {imp.target} ({WHY.get(mod.component, '?')})"
                    )
            if under(imp.target, "asyncpg") and mod.component not in ASYNCPG_OWNERS:
                out.append(f"{where}:{imp.line}: {mod.name} imports asyncpg (only taskyard.result_store may)")
            if under(imp.target, "grpc") and mod.component in GRPC_FREE:
                out.append(f"{where}:{imp.line}: {mod.name} imports grpc (behind the gateway: errors.Code)")
        if mod.component not in GRPC_SERVER_OWNERS:
            for line in grpc_server_calls(source):
                out.append(f"{where}:{line}: {mod.name} creates a gRPC server (only taskyard.gateway may)")
    return sorted(set(out))


def unpackaged_modules() -> list[str]:
    """Python files in a service or client source root that no package-dir entry covers."""
    covered = [p for p in packages().values()]
    roots = [*(ROOT / "services").glob("*/taskyard"), ROOT / "clients/python/taskyard"]
    out = []
    for root in roots:
        for path in root.rglob("*.py"):
            if not any(path.is_relative_to(c) for c in covered):
                out.append(str(path.relative_to(ROOT)))
    return sorted(out)


# --- the rules, on the real code ---------------------------------------------


def test_architecture_rules_hold() -> None:
    found = violations()
    assert not found, "architecture violations:\n  " + "\n  ".join(found)


def test_every_module_belongs_to_a_package() -> None:
    stray = unpackaged_modules()
    assert not stray, (
        "modules outside every [tool.setuptools.package-dir] entry (not installed, not checked):\n  "
        + "\n  ".join(stray)
    )


def test_every_component_has_rules() -> None:
    components = {m.component for m in hand_written_modules()}
    assert "core" in components
    unknown = components - set(ALLOWED)
    assert not unknown, f"packages without architecture rules (add them to ALLOWED): {sorted(unknown)}"


# --- the checker itself ----------------------------------------------------------


def test_imports_resolve_relative_and_dynamic_forms() -> None:
    src = textwrap.dedent(
        """
        import taskyard.scheduler.lanes
        from taskyard import gateway
        from . import lanes
        from ..worker_pool import registry
        from .. import core
        import importlib
        importlib.import_module("taskyard.result_store.service")
        """
    )
    got = {i.target for i in imports_of(src, "taskyard.gateway.server", is_package=False)}
    assert {
        "taskyard.scheduler.lanes",
        "taskyard.gateway",
        "taskyard.gateway.lanes",
        "taskyard.worker_pool.registry",
        "taskyard.core",
        "taskyard.result_store.service",
    } <= got


@pytest.mark.parametrize(
    "src",
    [
        "import grpc\ngrpc.server(None)",
        "import grpc\ngrpc.aio.server()",
        "import grpc.aio\ngrpc.aio.server()",
        "import grpc.aio as ga\nga.server()",
        "from grpc import aio\naio.server()",
        "from grpc import aio as a\na.server()",
        "from grpc.aio import server\nserver()",
        "from grpc import server as make\nmake(None)",
    ],
)
def test_grpc_server_creation_is_found(src: str) -> None:
    assert list(grpc_server_calls(src)) == [2]


@pytest.mark.parametrize(
    "src",
    [
        "import grpc\ngrpc.aio.insecure_channel('x')",
        "import grpc\nserver = object()\nserver()",
        "from grpc import aio\naio.Server",
        "import other\nother.server()",
    ],
)
def test_grpc_clients_are_not_servers(src: str) -> None:
    assert list(grpc_server_calls(src)) == []
