"""bench/chaos's flood: a peer without the bus key sends the result-store's port large
junk under a trailer that names the suite's real key id and a fresh send time (what
one that read a trailer off the wire can forge), so only the MAC can refuse it.

Measured around it: the store's RSS (before, and its peak during the flood, sampled
every 20 ms) and reads through the gateway (GetTask, one after another: p50 before
and during). The bounds (docs/reliability.md): RSS peak within 100 MiB of before, or
five junk messages and 16 MiB where that is more (``FloodFigures.rss_bound``),
every read answered. The reads' p50 is said against 2x of before, a figure and not a
failure: the flooder runs on the same two cores, so how much slower a read gets
depends on what else the machine runs (a timing bound made the run flaky).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import psutil
import pynng

from taskyard.core import contract, seal, transport

JUNK_BYTES = 60 << 20  # what the flood that stopped every read sent (over the store's limit now)
SENDERS = 2  # keyless sockets, each redialling when the store closes its pipe
RSS_BOUND = 100 << 20
# The store's own heap while the flood lasts: it answers hundreds of reads and keeps
# its caches meanwhile, which the RSS taken before the flood does not include.
WORKING_SLACK = 16 << 20
P50_FACTOR = 2.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class FloodFigures:
    size: int  # bytes per junk message
    rss_before: int
    rss_peak: int
    p50_before: float  # seconds
    p50_during: float
    reads_before: int
    reads_during: int
    read_errors: int
    store_cpu_before: float  # CPU seconds the store used in the phase before
    store_cpu_during: float
    flooder_cpu: float  # CPU seconds of the flooder's process (it shares this machine's cores)
    sent: int
    pipes_closed: int

    @property
    def rss_bound(self) -> int:
        """What the flood may make the store hold: each sender's connection a message of
        its size while NNG reads it, as much again on the connection it redials while
        the closed one's buffer is freed, and the one body being hashed (docs/security.md,
        "bounded memory"), plus the store's own working memory meanwhile; at least
        RSS_BOUND. Unbounded growth (4 GiB in 15 s, before the gate) is far past it."""
        return max(RSS_BOUND, (2 * SENDERS + 1) * self.size + WORKING_SLACK)

    @property
    def passed(self) -> bool:
        within = self.rss_peak - self.rss_before <= self.rss_bound
        return within and self.reads_during > 0 and not self.read_errors

    @property
    def reads_kept_pace(self) -> bool:
        return self.p50_during <= P50_FACTOR * self.p50_before

    def lines(self) -> list[str]:
        mib = 1 << 20
        return [
            f"  junk sent          {self.sent:>7}  messages of {self.size / mib:.1f} MiB; "
            f"flooding pipes closed by the store: {self.pipes_closed}",
            f"  store RSS          {self.rss_before / mib:7.0f} MiB before, "
            f"peak {self.rss_peak / mib:.0f} MiB "
            f"during (+{(self.rss_peak - self.rss_before) / mib:.0f} MiB; "
            f"bound +{self.rss_bound // mib} MiB)",
            f"  reads answered     {self.reads_during:>7}  during the flood, "
            f"p50 {self.p50_during * 1000:.1f} ms "
            f"(before: {self.reads_before}, p50 {self.p50_before * 1000:.1f} ms; "
            f"{'within' if self.reads_kept_pace else 'over'} {P50_FACTOR:g}x, a figure); "
            f"errors {self.read_errors}",
            f"  CPU seconds        store {self.store_cpu_before:.2f} before, "
            f"{self.store_cpu_during:.2f} during; "
            f"the flooder {self.flooder_cpu:.2f} (same cores)",
        ]


def junk(kid: bytes, size: int) -> Callable[[], bytes]:
    """A maker of junk envelopes of a write's kind (bounded by the socket's limit
    alone), about ``size`` bytes, with a fresh forged trailer each time; the body is
    built once."""
    body = transport.encode(contract.STORE_REPORT.kind, os.urandom(1024) + bytes(size - 4096))

    made: list[tuple[float, bytes]] = []

    def make() -> bytes:
        # A fresh send time once a second is all the window asks; rebuilding 60 MiB
        # per message would only spend the flooder's CPU (which this machine shares).
        now = time.monotonic()
        if not made or now - made[0][0] > 1.0:
            message = b"".join(
                (
                    body,
                    struct.pack(">Q", int(time.time() * 1000)),
                    os.urandom(seal.NONCE_BYTES),
                    kid,
                    bytes((len(kid), seal.VERSION)),
                    os.urandom(seal.MAC_BYTES),
                )
            )
            made[:] = [(now, message)]
        return made[0][1]

    return make


class _Sender(threading.Thread):
    def __init__(self, address: str, make: Callable[[], bytes], stop: threading.Event) -> None:
        super().__init__(name="flood-sender", daemon=True)
        self.sock = pynng.Req0(send_timeout=500, reconnect_time_min=20, reconnect_time_max=100)
        self.closed = 0
        self.sent = 0
        self.sock.add_post_pipe_remove_cb(self._gone)
        self.sock.dial(address, block=False)
        self._make = make
        self._halt = stop

    def _gone(self, _pipe: object) -> None:
        self.closed += 1

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.sock.send(self._make())
                self.sent += 1
            except pynng.NNGException:
                time.sleep(0.01)
        self.sock.close()


class _RssPeak(threading.Thread):
    def __init__(self, pid: int, stop: threading.Event) -> None:
        super().__init__(name="flood-rss", daemon=True)
        self.proc = psutil.Process(pid)
        self.peak = 0
        self._halt = stop

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.02)


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


def read_latencies(read: Callable[[], object], seconds: float) -> tuple[list[float], int]:
    """Reads one after another for ``seconds``: their latencies, and how many failed."""
    latencies: list[float] = []
    errors = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        try:
            read()
        except Exception:  # a read that fails is counted, not timed
            errors += 1
            continue
        latencies.append(time.perf_counter() - t)
    return latencies, errors


def send_junk(address: str, kid: str, size: int) -> None:
    """The flooder's own process (its threads must not share the measuring reader's
    GIL): sends until SIGTERM, then prints what it sent as one JSON line."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    make = junk(kid.encode(), size)
    senders = [_Sender(address, make, stop) for _ in range(SENDERS)]
    for s in senders:
        s.start()
    print("flooding", flush=True)
    stop.wait()
    for s in senders:
        s.join(5.0)
    print(
        json.dumps({"sent": sum(s.sent for s in senders), "closed": sum(s.closed for s in senders)}),
        flush=True,
    )


def flood(
    *, store_address: str, kid: str, store_pid: int, read: Callable[[], object], seconds: float, size: int
) -> FloodFigures:
    """Measure reads and the store's RSS for ``seconds``, then flood with junk of
    ``size`` bytes for as long while measuring again."""
    store = psutil.Process(store_pid)
    cpu0 = _cpu(store)
    before, _ = read_latencies(read, seconds)
    cpu1 = _cpu(store)
    rss_before = store.memory_info().rss
    stop = threading.Event()
    rss = _RssPeak(store_pid, stop)
    flooder = subprocess.Popen(
        [sys.executable, __file__, "--address", store_address, "--kid", kid, "--size", str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert flooder.stdout is not None
        flooder.stdout.readline()  # "flooding": its sockets are up
        rss.start()
        during, errors = read_latencies(read, seconds)
        cpu2 = _cpu(store)
    finally:
        stop.set()
        flooder_cpu = _cpu(psutil.Process(flooder.pid))
        flooder.terminate()
        out, _ = flooder.communicate(timeout=30)
        rss.join(1.0)
    counts = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"sent": 0, "closed": 0}
    return FloodFigures(
        size=size,
        rss_before=rss_before,
        rss_peak=max(rss.peak, rss_before),
        p50_before=statistics.median(before) if before else 0.0,
        p50_during=statistics.median(during) if during else float("inf"),
        reads_before=len(before),
        reads_during=len(during),
        read_errors=errors,
        store_cpu_before=cpu1 - cpu0,
        store_cpu_during=cpu2 - cpu1,
        flooder_cpu=flooder_cpu,
        sent=int(counts["sent"]),
        pipes_closed=int(counts["closed"]),
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the keyless flooder of bench/chaos (its own process)")
    parser.add_argument("--address", required=True)
    parser.add_argument("--kid", required=True, help="the key id seen on the wire (no secret)")
    parser.add_argument("--size", type=int, default=JUNK_BYTES)
    a = parser.parse_args()
    send_junk(a.address, a.kid, a.size)
