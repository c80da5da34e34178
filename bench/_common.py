"""Shared plumbing of the benchmarks: a fresh cluster on a fresh (or given)
database, started exactly like the integration tests start theirs
(tests/support/cluster.py, which launches `python -m taskyard.<service>`).

Commits stay durable: the embedded PostgreSQL keeps fsync and
synchronous_commit on (pgserver's defaults); nothing here turns them off.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.cluster import Cluster  # noqa: E402

from taskyard.cli import jaeger, procs  # noqa: E402
from taskyard.cli.procs import EmbeddedPostgres  # noqa: E402
from taskyard.core import seal  # noqa: E402


def add_cluster_args(parser: argparse.ArgumentParser, *, workers: int = 1, concurrency: int = 8) -> None:
    parser.add_argument("--workers", type=int, default=workers, help="worker processes in the pool")
    parser.add_argument("--concurrency", type=int, default=concurrency, help="tasks per worker process")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("TASKYARD_BENCH_DATABASE_URL", ""),
        help="use this (empty, or already migrated) PostgreSQL database instead of a fresh embedded one",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, pgdata) afterwards")
    parser.add_argument(
        "--trace-sample",
        type=float,
        default=None,
        help="trace this fraction of tasks (0..1) into a Jaeger started for the run; unset: tracing off",
    )


def machine_facts() -> str:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = psutil.virtual_memory().total / 2**30
    return (
        f"machine: {os.cpu_count()} cores ({model or platform.processor() or 'unknown cpu'}), "
        f"{mem:.1f} GiB RAM, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def print_header(name: str) -> None:
    print(f"# {name}")
    print("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    print(machine_facts())
    sys.stdout.flush()


@contextlib.contextmanager
def bench_cluster(
    args: argparse.Namespace, *, tokens: str = "", ready_token: str = "", **overrides: Any
) -> Iterator[Cluster]:
    """The cluster, ready. ``tokens``: a tokens file's text, which turns auth on (the
    gateway then takes only these tokens); ``ready_token`` is the token (submit and
    read) the readiness probe sends."""
    work = Path(tempfile.mkdtemp(prefix="taskyard-bench-"))
    pg: EmbeddedPostgres | None = None
    cluster: Cluster | None = None
    tracer: jaeger.Jaeger | None = None
    ok = False
    try:
        if args.trace_sample is not None:
            tracer = _start_jaeger(work)
            overrides["env"] = {
                **overrides.get("env", {}),
                **tracer.otel_environment(),
                "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": str(args.trace_sample),
            }
            print(
                f"tracing: {args.trace_sample:.0%} of tasks sampled, exported to Jaeger ({tracer.query_url})"
            )
        else:
            print("tracing: off (no OTLP endpoint)")
        url = args.database_url
        if not url:
            pg = EmbeddedPostgres(work / "pgdata", delete=not args.keep)
            url = pg.url
            print("database: fresh embedded PostgreSQL (pgserver), fsync=on, synchronous_commit=on")
        else:
            print("database: given by --database-url")
        if tokens:
            tokens_file = work / "tokens"
            tokens_file.touch(mode=0o600)
            tokens_file.write_text(tokens)
            overrides["env"] = {**overrides.get("env", {}), "TASKYARD_AUTH_TOKENS_FILE": str(tokens_file)}
            count = sum(1 for line in tokens.splitlines() if line.strip() and not line.startswith("#"))
            print(f"auth: on, {count} tokens")
        cluster = Cluster(
            url,
            work,
            # A key per role, as taskyard dev and a production suite have them: a lane
            # relays a gateway's tasks unread, and the store does not decode them again.
            bus_keys=seal.generate_role_keys("bench"),
            workers=args.workers,
            concurrency=args.concurrency,
            server_name="bench",
            development=False,
            **overrides,
        )
        print(
            f"cluster: {args.workers} worker(s) x {args.concurrency}, transport ipc, gateway {cluster.target}"
        )
        sys.stdout.flush()
        cluster.start()
        if ready_token:
            try:
                procs.wait_ready(
                    cluster.target,
                    deadline=time.monotonic() + 60,
                    alive=list(cluster.procs.values()),
                    token=ready_token,
                )
            except procs.NotReady as exc:
                raise SystemExit(f"cluster not ready: {exc}") from exc
        else:
            cluster.wait_ready(timeout=60)
        yield cluster
        ok = True
    finally:
        if cluster is not None:
            if not ok:
                print(cluster.logs_tail(), file=sys.stderr)
            cluster.stop()
        if pg is not None:
            pg.stop()
        if tracer is not None:
            tracer.stop()
        if args.keep or not ok:
            print(f"(logs kept in {work})", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _start_jaeger(work: Path) -> jaeger.Jaeger:
    binary = jaeger.find_binary()
    if binary is None:
        raise SystemExit("--trace-sample needs Jaeger: tools/install-tools.sh jaeger")
    ports = jaeger.Ports.free()
    return jaeger.start(binary, ports, work / "jaeger")


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


# A task's hop stamps (taskyard.core.hops), from the client's send to its receipt.
Trip = list[tuple[str, int]]


def print_breakdown(trips: list[Trip], *, routes: int = 1) -> None:
    """Each step between consecutive stamps, over the trips that took the most
    common route, then the next ``routes - 1`` (a task that missed the fast path,
    or whose final event was lost and read back instead, has other stamps)."""
    by_route: dict[tuple[str, ...], list[Trip]] = {}
    for trip in trips:
        by_route.setdefault(tuple(hop for hop, _ in trip), []).append(trip)
    if not by_route:
        print("breakdown:        no stamped trips")
        return
    for route, same in sorted(by_route.items(), key=lambda kv: -len(kv[1]))[:routes]:
        _print_route(route, same, len(trips))


def _print_route(route: tuple[str, ...], same: list[Trip], total: int) -> None:
    print(f"breakdown:        {len(same)} of {total} trips took this route (ms between stamps)")
    print(f"  {'step':<48} {'p50':>7} {'p90':>7} {'p99':>7}")
    for k in range(1, len(route)):
        steps = sorted((t[k][1] - t[k - 1][1]) / 1e6 for t in same)
        label = f"{route[k - 1]} -> {route[k]}"
        print(
            f"  {label:<48} {percentile(steps, 50):7.3f} {percentile(steps, 90):7.3f} "
            f"{percentile(steps, 99):7.3f}"
        )
    totals = sorted((t[-1][1] - t[0][1]) / 1e6 for t in same)
    p50, p90, p99 = (percentile(totals, p) for p in (50, 90, 99))
    print(f"  {'total':<48} {p50:7.3f} {p90:7.3f} {p99:7.3f}")
