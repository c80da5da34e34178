"""A fork server for the test clusters' services: the imports paid once, not per start.

Starting a service is nearly all imports (about 0.5 CPU-s each of the four, 2.2 for a
cluster), and the suite starts hundreds of clusters on two cores. One server per test
process imports every service's modules once, then forks a child per start that runs
the service's ``__main__`` exactly as ``python -m taskyard.<service>`` would: its own
session, environment, working directory, ``sys.path`` and log file, stop signals held
until its handler waits, SIGTERM when its launcher (this server) dies, and the
interpreter's own exit (thread joins, atexit, exit status), short of freeing every
module's objects one by one: about 0.1 CPU-s a service, paid hundreds of times a run,
for nothing the operating system does not do at once (``_exit``).

The server is a child of the test process and forks nothing else, so it is
single-threaded when it forks (checked: a thread there would be copied stopped,
perhaps holding a lock). The services are its children, not the test's: it reaps
them and reports each exit status, which ``ForkedService`` answers ``poll`` and
``wait`` from, as ``subprocess.Popen`` does.

Protocol, one JSON object per line. Requests on the server's stdin:
``{"module", "env", "cwd", "log"}``; on its stdout the answer ``{"pid", "child"}`` (or
``{"error"}``), and at any time ``{"exited": child, "returncode": n}``. A child is
named by its number, not its PID: PIDs come round again (32,768 of them here), and a
new child may get the PID of one whose exit was reported a moment before. The server
ends when its stdin closes.

``cli.procs.spawn`` (taskyard dev, taskyard serve) still starts services with
``python -m``; tests/integration/test_service_launch.py covers that path.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import runpy
import selectors
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# What ``python -m taskyard.<service>`` imports before it is ready: each ``__main__``.
SERVICE_MODULES = ("taskyard.result_store", "taskyard.scheduler", "taskyard.worker_pool", "taskyard.gateway")
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
TESTS_DIR = Path(__file__).resolve().parent.parent


class ForkServerError(RuntimeError):
    pass


# --- the server -------------------------------------------------------------------


def _threads() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return threading.active_count()


def _preload() -> None:
    for package in SERVICE_MODULES:
        importlib.import_module(f"{package}.__main__")
        # Forgotten, so that runpy runs it afresh as __main__ (and does not warn that it
        # was imported first); everything it imported stays.
        del sys.modules[f"{package}.__main__"]
        with contextlib.suppress(AttributeError):
            delattr(sys.modules[package], "__main__")


def _send(message: Mapping[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


def serve() -> dict[str, Any]:
    """Answer requests until stdin closes (then exit); in a forked child, return its request."""
    from taskyard.core import lifecycle

    lifecycle.end_with_launcher()  # the services' launcher goes with the test process
    _preload()
    if _threads() != 1:
        raise ForkServerError(f"the fork server has {_threads()} threads after its imports: it must have one")
    # After ``-m``'s working directory and our PYTHONPATH: the stdlib and site-packages.
    ours = set(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    base_path = [p for p in sys.path[1:] if p not in ours]
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd hears it
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "requests")
    selector.register(wake_r, selectors.EVENT_READ, "children")
    pending = b""
    children: dict[int, int] = {}  # pid -> the child's number
    numbers = itertools.count(1)
    while True:
        for key, _ in selector.select():
            if key.data == "children":
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 512):
                        pass
                _reap(children)
                continue
            chunk = os.read(0, 1 << 16)
            if not chunk:
                os._exit(0)  # the test process is done (its services went with their clusters)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                try:
                    pid = _fork(request)
                except OSError as exc:
                    _send({"error": f"fork: {exc}"})
                    continue
                if pid == 0:
                    selector.close()
                    for fd in (wake_r, wake_w):
                        os.close(fd)
                    _become(request, base_path)
                    return request
                number = children[pid] = next(numbers)
                _send({"pid": pid, "child": number})
        _reap(children)


def _reap(children: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send({"exited": children.pop(pid), "returncode": os.waitstatus_to_exitcode(status)})


def _fork(request: Mapping[str, Any]) -> int:
    # Held across the fork and left held in the child, as cli.procs.spawn does: a stop
    # sent while it still sets up waits for its handler (lifecycle.stop_event_on_signals).
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    pid = os.fork()
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return pid


def _become(request: Mapping[str, Any], base_path: list[str]) -> None:
    """Turn this fork into the process ``python -m <module>`` would have started."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    cwd = request["cwd"]
    os.chdir(cwd)
    env: dict[str, str] = request["env"]
    os.environ.clear()
    os.environ.update(env)
    own = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [cwd, *own, *(p for p in base_path if p not in own)]
    sys.argv = [request["module"]]
    # What the interpreter runs at start-up from the request's own PYTHONPATH (the
    # server has its own): its first sitecustomize, e.g. tests/support/skewed_clock.
    for directory in own:
        custom = Path(directory) / "sitecustomize.py"
        if custom.is_file():
            runpy.run_path(str(custom), run_name="sitecustomize")
            break


def _exit_status(code: object) -> int:
    """The status the interpreter exits with for ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _exit(status: int) -> None:
    """End as the interpreter does after ``__main__``: join the threads that are not
    daemons, run the atexit handlers (span exporters, logging), flush, then leave
    without tearing the modules down."""
    getattr(threading, "_shutdown")()  # noqa: B009 - the interpreter's own step, not public API
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def main() -> None:
    import runpy
    import traceback

    request = serve()
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        status = _exit_status(stop.code)
    except KeyboardInterrupt:
        # The interpreter ends by the signal, so its parent sees -SIGINT.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        os.kill(os.getpid(), signal.SIGINT)
        status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    else:
        status = 0
    _exit(status)


# --- the test process's side ----------------------------------------------------------


class ForkedService:
    """A service forked by the server: the part of ``subprocess.Popen`` the harness uses."""

    def __init__(self, server: ForkServer, pid: int, number: int, module: str) -> None:
        self._server = server
        self._number = number
        self.pid = pid
        self.args = [sys.executable, "-m", module]
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.returncode(self._number, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server.returncode(self._number, timeout=timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """This test process's fork server, started on first use; ends with the process."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one request at a time: answers come in order
        self._changed = threading.Condition()
        self._answers: list[dict[str, Any]] = []
        self._exits: dict[int, int] = {}  # a child's number -> its exit status
        self._gone = ""

    def spawn(self, module: str, env: Mapping[str, str], log: Path) -> ForkedService:
        with self._lock:
            proc = self._started()
            assert proc.stdin is not None
            from taskyard.core import lifecycle

            # The service ends with its parent, this server, which ends with us.
            own = {**env, lifecycle.LAUNCHER_PID: str(proc.pid)}
            request = {"module": module, "env": own, "cwd": os.getcwd(), "log": str(log)}
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            with self._changed:
                self._changed.wait_for(lambda: self._answers or self._gone)
                if not self._answers:
                    raise ForkServerError(f"the fork server is gone: {self._gone}")
                answer = self._answers.pop(0)
        if "error" in answer:
            raise ForkServerError(f"the fork server could not start {module}: {answer['error']}")
        return ForkedService(self, int(answer["pid"]), int(answer["child"]), module)

    @property
    def pid(self) -> int:
        """The server's own PID (started here if it was not yet)."""
        with self._lock:
            return self._started().pid

    def close(self) -> None:
        """End the server (its stdin closed); the services it forked get SIGTERM."""
        with self._lock:
            if self._proc is None:
                return
            proc, self._proc = self._proc, None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        proc.wait(timeout=30)

    def returncode(self, child: int, *, timeout: float | None) -> int | None:
        """The exit status of a child by its number (negative: the signal that ended
        it), or None while it runs ``timeout`` seconds on (None: as long as it runs)."""
        with self._changed:
            self._changed.wait_for(lambda: child in self._exits or self._gone, timeout)
            if child in self._exits:
                return self._exits[child]
            if self._gone:
                raise ForkServerError(f"the fork server is gone: {self._gone}")
            return None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None:
            return self._proc
        from taskyard.core import lifecycle

        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}
        inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS_DIR), *inherited])
        env["PYTHONUNBUFFERED"] = "1"
        env[lifecycle.LAUNCHER_PID] = str(os.getpid())
        # Not the services' own stop_signals_held: the server takes SIGTERM as any process.
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "support.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=TESTS_DIR,
        )
        threading.Thread(target=self._read, args=(self._proc,), name="fork-server", daemon=True).start()
        return self._proc

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line)
            with self._changed:
                if "exited" in message:
                    self._exits[int(message["exited"])] = int(message["returncode"])
                else:
                    self._answers.append(message)
                self._changed.notify_all()
        with self._changed:
            self._gone = f"exit status {proc.wait()}"
            self._changed.notify_all()


_server: ForkServer | None = None
_server_lock = threading.Lock()


def server() -> ForkServer:
    """This process's fork server (one per test process: an xdist worker has its own)."""
    global _server
    with _server_lock:
        if _server is None:
            _server = ForkServer()
        return _server


if __name__ == "__main__":
    main()
