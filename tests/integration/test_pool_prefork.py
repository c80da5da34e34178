"""The pool's template forked from its manager at the manager's start (prefork.py), in
real processes: it is a fork (it has what the manager imported), it holds only the
descriptors multiprocessing passes it and shows the command it runs, its workers can
start processes of their own, and a process that runs a thread is never forked from."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from taskyard.worker_pool import launcher

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(launcher.start_method() != launcher.FORKSERVER, reason="no pidfds: spawned workers"),
]

# Imported by the template as its preload: it says what it found there.
PROBE = """
import json, os, sys, threading

def target(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except FileNotFoundError:  # the one that listed them
        return None

parent = sys.modules.get("parent_state")
fds = {fd: target(fd) for fd in os.listdir("/proc/self/fd")}
found = {
    "parent_value": getattr(parent, "value", None),
    "fds": {fd: path for fd, path in fds.items() if path is not None},
    "cmdline": open("/proc/self/cmdline").read(),
    "argv": sys.argv,
    "threads": threading.active_count(),
}
with open(os.environ["PROBE_OUT"], "w") as out:
    json.dump(found, out)
"""

MANAGER = """
import json, multiprocessing, os, signal, sys, threading, time
from taskyard.worker_pool import prefork


def grandchild():
    pass


def worker():
    # A body that starts processes of its own, by the same start method.
    child = multiprocessing.get_context("forkserver").Process(target=grandchild)
    child.start()
    child.join(20)
    sys.exit(child.exitcode)


if __name__ == "__main__":
    import parent_state
    parent_state.value = "set by the manager before the fork"
    if sys.argv[1] == "with-a-thread":
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    unpassed = open("unpassed.txt", "w")
    # Held, as a launcher holds them until the manager's handler waits.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    started = prefork.start_template(["template_probe"])
    held = signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, ())
    # As the launcher does, whether or not the template was started above.
    multiprocessing.get_context("forkserver").set_forkserver_preload(["template_probe"])
    process = multiprocessing.get_context("forkserver").Process(target=worker)
    process.start()
    process.join(40)
    print(json.dumps({"started": started, "held": held, "worker_exit": process.exitcode}))
"""


def run_manager(tmp_path: Path, mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
    (tmp_path / "parent_state.py").write_text("value = None\n")
    (tmp_path / "template_probe.py").write_text(PROBE)
    (tmp_path / "manager.py").write_text(textwrap.dedent(MANAGER))
    out = tmp_path / "probe.json"
    # Its own process group: the template and its workers end with it, whatever happens.
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "manager.py"), mode],
        cwd=tmp_path,
        env={"PROBE_OUT": str(out), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=50)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == 0, stderr
    manager: dict[str, Any] = json.loads(stdout.splitlines()[-1])
    template: dict[str, Any] = json.loads(out.read_text())
    return manager, template


def test_the_template_is_a_fork_of_the_manager_and_no_more(tmp_path: Path) -> None:
    manager, template = run_manager(tmp_path, "single-threaded")
    assert manager["started"] is True and manager["held"] is True
    assert template["parent_value"] == "set by the manager before the fork"
    # The standard three and what multiprocessing passes (its listener and alive pipe):
    # never the manager's other descriptors.
    assert not [path for path in template["fds"].values() if path.endswith("unpassed.txt")]
    assert len(template["fds"]) == 5, template["fds"]
    # ps shows the command it runs, as when it was a new interpreter.
    assert "from multiprocessing.forkserver import main" in template["cmdline"]
    assert template["argv"] == ["-c"] and template["threads"] == 1
    # A worker's own processes start: no lock of the manager's is held in the template.
    assert manager["worker_exit"] == 0


def test_a_manager_running_a_thread_leaves_the_template_to_a_new_interpreter(tmp_path: Path) -> None:
    manager, template = run_manager(tmp_path, "with-a-thread")
    assert manager["started"] is False
    assert template["parent_value"] is None  # a new interpreter: the manager's module is not there
    assert manager["worker_exit"] == 0
