"""The fork template: one preloaded process that every worker of a pool is forked from.

The manager starts its workers with multiprocessing's ``forkserver`` method
(processes.py). Its server process is the template: it imports this module, and
with it the worker's runtime (bootstrap, the runner, protobuf, pynng,
pydantic, the OpenTelemetry API), once; each worker is then a fork of it and
shares those pages copy-on-write instead of paying for a whole interpreter of
its own. The task modules are still imported by each worker after the fork
(bootstrap.main): a module's threads, connections and import errors stay the
worker's, exactly as with a fresh interpreter.

What a fork must not carry over is never made here: no event loop, no thread,
no NNG socket, no tracer provider. Each worker makes its own (bootstrap.main),
and the at-fork hooks of ``random`` reseed it in each child.

Importing this module prepares the current process as the template only inside
the forkserver (``prepare_template``); anywhere else (tests, the manager) it is
an ordinary import.
"""

from __future__ import annotations

import gc
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import types
from collections.abc import Mapping

# The runtime every worker runs: importing it here is the point of the template.
from taskyard.worker_pool import bootstrap  # noqa: F401

# What the forkserver preloads (multiprocessing.set_forkserver_preload).
PRELOAD = (__name__,)

# The OpenTelemetry SDK is imported only when spans are exported (core.tracing):
# then the template imports it too, so each worker does not.
_SDK_MODULES = (
    "opentelemetry.sdk.resources",
    "opentelemetry.sdk.trace",
    "opentelemetry.sdk.trace.export",
)
# The OTLP/HTTP exporter likewise, with requests (which it imports when it is made).
# Not the gRPC one: gRPC's core must not be loaded in a process that forks (each
# worker imports it for itself).
_HTTP_EXPORTER = ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "requests")
_OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class TemplateError(RuntimeError):
    """The template is not fit to fork from."""


def _in_forkserver() -> bool:
    """Whether this import is multiprocessing's forkserver preloading its modules: its
    ``main`` is on the stack. (Its command line, ``python -c``, is also a test runner's
    worker's, which may have imported multiprocessing.forkserver too.)"""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "main" and code.co_filename == _FORKSERVER_FILE:
            return True
        frame = frame.f_back
    return False


_FORKSERVER_FILE = multiprocessing.forkserver.__file__


def _tracing_modules(env: Mapping[str, str]) -> tuple[str, ...]:
    """What a worker will import to export spans (core.tracing.exporter_for), as far
    as it is safe to import before a fork."""
    if not any(env.get(name) for name in _OTLP_ENDPOINTS):
        return ()
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    return (*_SDK_MODULES, *_HTTP_EXPORTER) if protocol == "http/protobuf" else _SDK_MODULES


def prepare_template() -> None:
    """Make the current process the template workers are forked from."""
    for name in _tracing_modules(os.environ):
        __import__(name)
    # A thread does not survive a fork (only the forking one does), and a lock it
    # held stays held in every worker: refuse rather than fork workers that may hang.
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        raise TemplateError(f"the worker template must not run threads, found: {', '.join(others)}")
    # The manager stops the template by exiting (the forkserver's alive pipe), never
    # by a signal: a SIGTERM to the process group must not end it, which would end
    # the workers forked from it (their parent watch) before the manager drains them.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # A manager forks us (prefork.py) with its stop signals held, as a launcher holds
    # them until the manager's handler waits: held here, every worker and every process
    # a task body starts would inherit them held, and never hear a SIGTERM.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    # Every object imported so far goes to the permanent generation: the collector
    # never walks them in a worker, so it does not dirty (copy) their shared pages.
    gc.collect()
    gc.freeze()


if _in_forkserver():
    prepare_template()
