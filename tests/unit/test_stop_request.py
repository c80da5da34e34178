"""The stop request of ``taskyard dev`` and ``taskyard serve``: a signal handler that
takes no lock, so any number of signals, at any moment, is safe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from taskyard.cli.stop_request import StopRequest

# A process whose main thread waits on the stop request in a loop while SIGALRM
# arrives every 200 µs, each one running the handler: inside the wait, inside the
# previous handler, anywhere. A handler that took a lock (threading.Event.set) hangs
# or overflows the stack here within moments.
STORM = """
import signal, time
from taskyard.cli.stop_request import StopRequest
stop = StopRequest()
signal.signal(signal.SIGALRM, stop.on_signal)
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
waits = 0
while len(stop.received) < 5000:
    stop.wait(0.0001)
    waits += 1
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("stopped after", len(stop.received), "signals and", waits, "waits", flush=True)
"""


def test_a_storm_of_signals_never_hangs_the_handler() -> None:
    # The timeout only keeps a hang from holding the run: it is not a speed bound.
    done = subprocess.run(
        [sys.executable, "-c", STORM], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("stopped after"), done.stdout + done.stderr


# The same storm against the handler each command installs for SIGTERM (moved to
# SIGALRM, which the timer sends), waited on as each command waits.
INSTALLED = {
    "taskyard dev": """
import io
from pathlib import Path
from taskyard.cli import dev
options = dev.DevOptions(
    data_dir=Path("."), database_url=None, workers=None, concurrency=None, tasks=(),
    port=None, grace=1.0, ready_timeout=1.0,
)
suite = dev._Suite(options, dev._Printer(io.StringIO()))
dev.stop_on_signals(suite)
stop = suite.stop_request
""",
    "taskyard serve": """
from taskyard.cli import serve
stop = serve.stop_on_signals()
""",
}
INSTALLED_STORM = """
import signal
signal.signal(signal.SIGALRM, signal.getsignal(signal.SIGTERM))
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
while len(stop.received) < 5000:
    stop.wait(0.0001)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("stopped after", len(stop.received), "signals", flush=True)
"""


@pytest.mark.parametrize("command", sorted(INSTALLED))
def test_a_storm_of_signals_never_hangs_the_installed_handler(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", INSTALLED[command] + INSTALLED_STORM],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("stopped after"), done.stdout + done.stderr


def test_a_signal_wakes_the_waiter_and_is_remembered() -> None:
    stop = StopRequest()
    previous = signal.signal(signal.SIGUSR1, stop.on_signal)
    try:
        assert not stop.is_set() and stop.first_signal() is None
        for _ in range(3):
            os.kill(os.getpid(), signal.SIGUSR1)
        assert stop.wait(60.0)
        assert stop.is_set() and stop.first_signal() is signal.SIGUSR1
        assert stop.received == [signal.SIGUSR1] * 3
    finally:
        signal.signal(signal.SIGUSR1, previous)
        stop.close()


def test_many_requests_never_block_on_a_full_pipe() -> None:
    stop = StopRequest()
    try:
        for _ in range(100_000):  # far more than a pipe holds
            stop.request()
        assert stop.wait(0.0) and stop.first_signal() is None
    finally:
        stop.close()
