"""Run by tests/integration/test_forkserver.py as a service would be: prints, as one
JSON line, what a process started by ``python -m`` would see, then exits with
``REPORT_EXIT`` (or sleeps until signalled when it is ``wait``). With
``REPORT_ENDINGS`` set, it leaves work to the interpreter's exit: a thread that is not
a daemon still to write its line, and an atexit handler whose line is not flushed."""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
import threading

from taskyard.core import lifecycle


def main() -> None:
    lifecycle.end_with_launcher()  # as every service does first
    report = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "sid": os.getsid(0),
        "cwd": os.getcwd(),
        "path": sys.path[:2],
        "argv0": sys.argv[0],
        "name": __name__,
        "marker": os.environ.get("REPORT_MARKER"),
        "inherited": sorted(k for k in os.environ if k.startswith("REPORT_LEAK")),
        "held": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "stdin": sys.stdin.read(),
    }
    print(json.dumps(report), flush=True)
    if os.environ.get("REPORT_ENDINGS"):
        leaving = threading.Event()

        def last_words() -> None:
            leaving.wait()
            print("the thread was joined", flush=True)

        threading.Thread(target=last_words).start()
        # Not flushed: only the exit's own flush writes it.
        atexit.register(lambda: print("atexit ran"))
        leaving.set()
    exit_as = os.environ.get("REPORT_EXIT", "0")
    if exit_as == "wait":
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        signal.pause()
    sys.exit(int(exit_as))


if __name__ == "__main__":
    main()
