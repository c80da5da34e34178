"""`bench/chaos --quick --go-worker`: the fault schedule with one Go worker
(clients/go/bin/chaos-worker, over the public worker protocol) beside the Python pools
for the whole run. Its gateway is SIGKILLed under it (it reconnects), then it is
SIGKILLed itself while it holds attempts and started again. Nothing may be lost, no
attempt's body may run twice, and the Go worker must have run a share of the tasks.

The Go worker is built by `make clients` (CI runs it first); a missing binary fails
with that instruction rather than skipping."""

from __future__ import annotations

import re

import pytest
from support import bench
from support.postgres import server_bindir

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(270)]

BINARY = bench.BENCH.parent / "clients/go/bin/chaos-worker"


def _figure(text: str, label: str) -> int:
    match = re.search(rf"^  {label}\s+(\d+)", text, re.MULTILINE)
    assert match, f"no {label!r} line in:\n{text}"
    return int(match.group(1))


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries (pg_config --bindir)")
def test_quick_schedule_with_a_go_worker_loses_nothing() -> None:
    if not BINARY.exists():
        pytest.fail(f"the Go chaos worker is not built ({BINARY} missing): run `make clients`")
    # As docs/reliability.md shows it; --quick bounds the run at 150 s (and a hung step a minute later).
    code, out = bench.run("chaos", "--quick", "--go-worker", "--tasks", "200", timeout=230)
    assert code == 0, out
    assert re.search(r"^tasks: .*; faults: .*\bgo-worker\b", out, re.MULTILINE), out
    killed = re.search(
        r"SIGKILL the Go worker, restart.*recovery +\d+\.\d+ s.*\n.*pid (\d+) \(worker-\S+\) killed; "
        r"restarted after 1 s as pid (\d+) \(worker-\S+\)",
        out,
    )
    assert killed, out
    assert re.search(r"SIGKILL gateway, restart.*recovery +\d+\.\d+ s", out), out
    assert _figure(out, "final") == _figure(out, "acknowledged"), out
    assert _figure(out, "lost") == 0 and _figure(out, "stuck") == 0, out
    assert _figure(out, "bodies run more than once for one attempt") == 0, out

    go = out.split("## the Go worker", 1)[1].split("\n## ", 1)[0]
    runs = re.search(r"body runs +(\d+) +\(\S+ % of all, over (\d+) tasks; ok (\d+)", go)
    assert runs, out
    assert int(runs.group(1)) > 0 and int(runs.group(2)) > 0 and int(runs.group(3)) > 0, go
    # Both processes, the one killed and the one started after it, in the journal's pids.
    assert re.search(rf"\(pids {killed.group(1)} {killed.group(2)}\)", go), go
    # Its starts (2), and at least the reconnection after its gateway was killed.
    assert _figure(go, "welcomed") >= 3, out
    assert "the Go worker ran attempts and finished some: ok" in out, out
    assert "result: PASS" in out, out
