"""The TypeScript client as a user gets it: the packed `@taskyard/client` installed in a
project of its own, imported (ESM) and required (CommonJS), calling every service through
its transport against a real gateway, whose log a client's close leaves without a GOAWAY
error.

Needs `make clients-typescript` (CI runs `make clients` first) for the package's
dist/; a missing build fails here with that instruction.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.cluster import Cluster
from support.waiting import wait_until

# The first test also sets up the module's project (npm init, pack, install: three
# runs of NODE_TIMEOUT) before its own node run: above those limits together.
# One process runs the module: its packed project (two tsc builds) is made once.
pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(600), pytest.mark.xdist_group("typescript-package")]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients/typescript"
NODE_TIMEOUT = 120


def _readme_block(section: str) -> str:
    """The first code block of a section of the client's README, as a user copies it."""
    text = (PACKAGE / "README.md").read_text()
    body = text[text.index(f"## {section}\n") :].split("\n## ", 1)[0]
    return body.split("```", 2)[1].split("\n", 1)[1]


README_SERVICES = _readme_block("Queues, schedules and events: the transport")
README_REQUIRE = _readme_block("CommonJS")

# What the user's code does, in each module system.
ESM_IMPORTS = """
import { EventService, QueueService, ScheduleService, TaskService, TaskyardClient,
  createClient, createTaskyardTransport } from "@taskyard/client";
import { QueueService as GenQueueService } from "@taskyard/client/gen/taskyard/v1/queue_service_pb";
import { ScheduleService as GenScheduleService } from "@taskyard/client/gen/taskyard/v1/schedule_service_pb";
import { EventService as GenEventService, EventKind }
  from "@taskyard/client/gen/taskyard/v1/event_service_pb";
console.log(JSON.stringify({
  services: [EventService, QueueService, ScheduleService, TaskService].map((s) => s.typeName),
  gen: [GenEventService, GenQueueService, GenScheduleService].map((s) => s.typeName),
  same: GenQueueService === QueueService,
  eventKinds: Object.keys(EventKind).length > 0,
  functions: [typeof TaskyardClient, typeof createClient, typeof createTaskyardTransport],
}));
"""

CJS_REQUIRE = """
const { ScheduleService, EventService, TaskyardError, createTaskyardTransport } = require("@taskyard/client");
const { TaskState } = require("@taskyard/client/gen/taskyard/v1/task_pb");
const loaded = Object.keys(require.cache).filter((p) => p.includes("taskyard"));
console.log(JSON.stringify({
  services: [EventService, QueueService, ScheduleService].map((s) => s.typeName),
  functions: [typeof TaskyardClient, typeof TaskyardError, typeof createTaskyardTransport],
  success: TaskState.SUCCESS,
  commonjs: loaded.some((p) => p.includes("/dist/cjs/")),
}));
"""

# Against a real gateway: the task API, then the Queue and Schedule services over the
# client's transport, then close with a call still running; the gateway's log is read after.
AGAINST_GATEWAY = """
import { QueueService, ScheduleService, TaskyardClient, createClient } from "@taskyard/client";
const client = new TaskyardClient(process.env.TASKYARD_TARGET, { tls: false, timeoutMs: 20000 });
const { task } = await client.submit("add", [2, 3]);
const { task: done } = await client.wait(task.id, { waitMs: 30000 });
const queues = createClient(QueueService, client.transport);
const status = await queues.getQueueStatus({});
const schedules = createClient(ScheduleService, client.transport);
const listed = await schedules.listSchedules({});
const { task: sleeper } = await client.submit("sleep", [3]);
const waiting = client.wait(sleeper.id, { waitMs: 60000 }).then(() => "finished", (e) => e.code);
await client.close();
const running = await waiting;
console.log(JSON.stringify({
  state: done.state, result: done.result,
  queues: Array.isArray(status.queues), schedules: Array.isArray(listed.schedules),
  running,
}));
"""


def _node(project: Path, argv: list[str], env: dict[str, str] | None = None) -> Any:
    done = subprocess.run(
        ["node", *argv],
        cwd=project,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's project with the packed package installed from its tarball."""
    if not (PACKAGE / "dist" / "cjs" / "package.json").is_file():
        pytest.fail("the TypeScript client is not built (clients/typescript/dist): run `make clients`")
    work = tmp_path_factory.mktemp("ts-user")
    # The dist/ `make clients` built, packed as it is (no prepack build): the README's
    # own lines pack from a clone, building first (test_install_lines.py).
    packed = subprocess.run(
        ["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", str(work)],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        check=True,
    )
    tarball = work / json.loads(packed.stdout)[0]["filename"]
    user = work / "app"
    user.mkdir()
    (user / "package.json").write_text('{"name": "app", "private": true}\n')
    # The dependencies come from npm's cache when `make clients` has filled it.
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", str(tarball)],
        cwd=user,
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT,
        check=True,
    )
    return user


def test_every_service_imports_from_the_package(project: Path) -> None:
    (project / "imports.mjs").write_text(ESM_IMPORTS)
    out = _node(project, ["imports.mjs"])
    services = ["EventService", "QueueService", "ScheduleService", "TaskService"]
    assert out["services"] == [f"taskyard.v1.{s}" for s in services]
    assert out["gen"] == [f"taskyard.v1.{s}" for s in ("EventService", "QueueService", "ScheduleService")]
    assert out["same"] and out["eventKinds"]
    assert out["functions"] == ["function"] * 3


def test_require_loads_the_commonjs_build(project: Path) -> None:
    (project / "required.cjs").write_text(README_REQUIRE + CJS_REQUIRE)
    # Without require(esm) (Node before 20.19 has none): the CommonJS build must stand alone.
    out = _node(project, ["--no-experimental-require-module", "required.cjs"])
    services = ("EventService", "QueueService", "ScheduleService")
    assert out["services"] == [f"taskyard.v1.{s}" for s in services]
    assert out["functions"] == ["function"] * 3
    assert out["success"] > 0 and out["commonjs"]


def _client_connections(pid: int, before: set[tuple[Any, Any]]) -> set[tuple[Any, Any]]:
    conns = psutil.Process(pid).net_connections(kind="tcp")
    return {(c.laddr, c.raddr) for c in conns if c.raddr} - before


def test_close_leaves_no_goaway_in_the_gateway_log(project: Path, cluster: Cluster) -> None:
    gateway = cluster
    pid = gateway.pid("gateway")
    before = {(c.laddr, c.raddr) for c in psutil.Process(pid).net_connections(kind="tcp") if c.raddr}
    log_start = len(gateway.log_text("gateway"))
    readme = README_SERVICES.replace('"localhost:50051"', json.dumps(gateway.target))
    assert readme != README_SERVICES, "the README's example no longer dials localhost:50051"
    (project / "readme.mjs").write_text(readme)
    done = subprocess.run(
        ["node", "readme.mjs"], cwd=project, capture_output=True, text=True, timeout=NODE_TIMEOUT
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    paused = cluster.query("SELECT paused FROM queues WHERE name = 'reports'")
    assert paused == [{"paused": True}], paused
    (project / "gateway.mjs").write_text(AGAINST_GATEWAY)
    out = _node(project, ["gateway.mjs"], {"TASKYARD_TARGET": gateway.target})
    assert out == {
        "state": "SUCCESS",
        "result": 5,
        "queues": True,
        "schedules": True,
        "running": "CANCELLED",
    }
    # The gateway has read all the client sent (its GOAWAY among it) once it has let go of
    # the connection: only then is its log complete.
    wait_until(lambda: not _client_connections(pid, before), 30, "the gateway to let go of the client")
    logged = gateway.log_text("gateway")[log_start:]
    assert "goaway" not in logged.lower(), logged
