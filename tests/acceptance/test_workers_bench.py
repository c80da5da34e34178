"""`bench/workers --quick`: the Go worker (clients/go/cmd/bench-worker, built by the
bench) against the Python pool on one suite, end to end. Checks the shape of what it
prints and that its exit code agrees with its verdict, never a figure: whether the Go
worker keeps up is judged in docs/benchmarks.md (a loaded test machine is no place to
judge a ratio of rates)."""

from __future__ import annotations

import re
import shutil

import pytest
from support import bench

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain"),
]

RATE = r"[\d,]+"
MS = r" +[\d,]+ ms"
CPU = rf"worker side{MS}, gateway{MS}, scheduler{MS}, store{MS}"


def test_the_quick_workers_bench_runs_the_pool_and_the_go_worker_alike() -> None:
    code, out = bench.run("workers", "--quick", timeout=200)
    assert out.startswith("# workers\ncommand: "), out
    assert re.search(r"^machine: \d+ cores", out, re.M), out
    assert "python pool:      2 worker process(es) x 64 = 128 slots, task noop" in out, out
    assert re.search(
        r"^go worker: +1 process, 128 slots, task bench_noop_go \(.+\), over WorkerService$", out, re.M
    )
    assert "runs:             1,000 tasks each, BatchSubmitTasks of 500 from 4 channels" in out, out
    assert re.search(r"^go worker: +welcomed as \S+ \(pid \d+\)$", out, re.M), out
    assert "warm-up" not in out, out
    rounds = re.findall(
        rf"^round 1 (python|go) *: +{RATE} tasks/s   CPU per 1,000 tasks: {CPU}   \(load [\d.]+\)$",
        out,
        re.M,
    )
    assert rounds == ["python", "go"], out
    for system in ("python", "go"):
        assert re.search(
            rf"^{system} +tasks/s: {RATE}   median {RATE}   \(CPU per 1,000 tasks, medians: {CPU}\)$",
            out,
            re.M,
        ), (system, out)
    assert re.search(r"^ratio go / python: \d+\.\d\d \(median tasks/s\)$", out, re.M), out
    verdict = re.search(r"^go >= python \(ratio at least 1\): (PASS|FAIL)$", out, re.M)
    assert verdict, out
    assert out.rstrip().endswith(f"result: {verdict[1]}"), out
    assert code == (0 if verdict[1] == "PASS" else 1), out
