"""TLS and bearer tokens through a real cluster: grpcurl, the Python client and the CLI
succeed with the right CA and token; no token is UNAUTHENTICATED; a read-only token
cannot cancel or purge; health answers without a token; no token reaches a log."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support import certs, grpcurl
from support.cluster import Cluster
from support.observability import scrape
from support.waiting import wait_until

from taskyard.client import Client, TaskyardError


def _submit_when_ready(client: Client, timeout: float) -> str:
    """Submit add(2, 3) once a pool serving it is known (health alone does not say so)."""

    def submitted() -> str | None:
        try:
            return client.submit("add", 2, 3).id
        except TaskyardError as exc:
            if exc.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return None

    return wait_until(submitted, timeout, "the gateway to know a pool serving 'add'")


def test_tls_and_tokens_through_a_cluster(
    cluster_factory: Callable[..., Cluster], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TASKYARD_TOKEN", raising=False)
    material = certs.make(tmp_path / "certs")
    admin, submitter, reader = (f"{who}-{secrets.token_urlsafe(24)}" for who in ("adm", "sub", "rd"))
    tokens_file = tmp_path / "tokens"
    tokens_file.write_text(
        f"sha256:{hashlib.sha256(admin.encode()).hexdigest()}  admin  ops\n"
        f"{submitter}  submit,read  producer\n"
        f"{reader}  read  dashboard\n"
    )
    cluster = cluster_factory(
        start=False,
        env={
            "TASKYARD_TLS_CERT": str(material.server_cert),
            "TASKYARD_TLS_KEY": str(material.server_key),
            "TASKYARD_AUTH_TOKENS_FILE": str(tokens_file),
        },
    )
    cluster.start()
    target = cluster.target
    ca = material.ca

    # Health: no token, over TLS.
    creds = grpc.ssl_channel_credentials(root_certificates=ca.read_bytes())
    with grpc.secure_channel(target, creds) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        wait_until(
            lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1,
            45,
            lambda: f"health SERVING over TLS\n{cluster.logs_tail()}",
        )

    with Client(target, tls_ca=ca, token=submitter) as producer:
        task_id = _submit_when_ready(producer, 20)
        done = producer.wait(task_id, timeout=30)
        assert done.state.name == "SUCCESS" and done.result == 5

    with Client(target, tls_ca=ca) as anonymous, Client(target, tls_ca=ca, token=reader) as dashboard:
        with pytest.raises(TaskyardError) as missing:
            anonymous.get(task_id)
        assert (missing.value.code, missing.value.reason) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_MISSING",
        )
        assert dashboard.get(task_id).result == 5
        refused: dict[str, Any] = {}
        for what, call in (("cancel", lambda: dashboard.cancel(task_id)), ("purge", dashboard.queues.purge)):
            with pytest.raises(TaskyardError) as exc:
                call()
            refused[what] = (exc.value.code, exc.value.reason)
        assert refused == {
            "cancel": (grpc.StatusCode.PERMISSION_DENIED, "SCOPE_MISSING"),
            "purge": (grpc.StatusCode.PERMISSION_DENIED, "SCOPE_MISSING"),
        }

    got = grpcurl.call(
        target,
        "taskyard.v1.TaskService/GetTask",
        {"id": task_id},
        plaintext=False,
        extra=["-cacert", str(ca), "-H", f"authorization: Bearer {reader}"],
    )
    assert got["task"]["result"] == 5

    token_file = tmp_path / "reader-token"
    token_file.write_text(reader)
    base = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}
    where = ["--target", target, "--tls-ca", str(ca), "--token-file", str(token_file)]
    cli = subprocess.run(
        [sys.executable, "-m", "taskyard.cli", "task", "get", task_id, *where, "--output", "json"],
        env=base,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["task"]["result"] == 5

    cluster.stop()
    log = cluster.log_text("gateway")
    assert "TLS" in log and "3 tokens" in log
    for secret in (admin, submitter, reader):
        assert secret not in log


# Probes between two looks at the gateway's count of waits taken (a scrape of its /metrics).
PROBES_PER_LOOK = 10
# Probes with every wait held, once the gateway has taken them all: enough for a p99.
HELD_PROBES = 1000


# Seconds a probe waits for its answer: the waits are held for an hour, so a probe
# queued behind them would never be answered.
PROBE_TIMEOUT = 5


def _waits_taken(cluster: Cluster) -> float:
    """The WaitTask calls the gateway has started (its grpc_server_started_total)."""
    text = scrape(cluster.metrics_ports["gateway"])
    found = re.search(r'^grpc_server_started_total\{[^}]*grpc_method="WaitTask"[^}]*\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.cluster(metrics=True)
def test_five_thousand_waits_on_a_cluster_leave_health_fast(cluster: Cluster, tmp_path: Path) -> None:
    """The gateway as its own process, with the real store behind it: 5,000 WaitTask on
    delayed tasks (from another process), Health/Check and GetTask answering promptly
    throughout. The figures are printed (p99 about 10-30 ms here, against a target of
    50); what is checked is that no probe starves: every one is answered within its
    deadline while every wait is held."""
    import json
    import statistics

    from taskyard.client import TaskRequest

    calls = 5000
    with cluster.client() as client:
        ids = [
            s.id
            for _ in range(calls // 1000)
            for s in client.submit_many([TaskRequest(name="noop", countdown=3600)] * 1000)
        ]
    ids_file = tmp_path / "ids"
    ids_file.write_text("\n".join(ids))
    tests_dir = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests_dir, os.environ.get("PYTHONPATH", "")])}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "support.waiting_clients", cluster.target, str(ids_file), "--channels", "4"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert waiting.stdin is not None and waiting.stdout is not None
    try:
        assert waiting.stdout.readline().strip() == "launched"
        checks: list[float] = []
        reads: list[float] = []
        with grpc.insecure_channel(cluster.target) as channel, cluster.client(timeout=10) as reader:
            health = health_pb2_grpc.HealthStub(channel)

            def probe() -> None:
                t0 = time.perf_counter()
                assert health.Check(health_pb2.HealthCheckRequest(), timeout=PROBE_TIMEOUT).status == 1
                checks.append(time.perf_counter() - t0)
                if len(checks) % 4 == 0:
                    t0 = time.perf_counter()
                    assert reader.get(ids[len(checks) % calls]).state.name == "SCHEDULED"
                    reads.append(time.perf_counter() - t0)

            def probed_until_all_taken() -> bool:
                for _ in range(PROBES_PER_LOOK):
                    probe()
                return _waits_taken(cluster) >= calls

            # Probes while the waits arrive, then with every one of them held.
            wait_until(
                probed_until_all_taken,
                60,
                lambda: f"the gateway to take all {calls} waits (took {_waits_taken(cluster):g})",
                interval=0,
            )
            for _ in range(HELD_PROBES):
                probe()
        waiting.stdin.close()
        summary = json.loads(waiting.stdout.readline())
    finally:
        if waiting.poll() is None:
            waiting.kill()
        waiting.wait()
    p99 = statistics.quantiles(checks, n=100)[98]
    read_p99 = statistics.quantiles(reads, n=100)[98]
    print(
        f"\ncluster, {calls} WaitTask: Health/Check p50 {statistics.median(checks) * 1e3:.2f} ms, "
        f"p99 {p99 * 1e3:.2f} ms, max {max(checks) * 1e3:.2f} ms ({len(checks)}); GetTask p50 "
        f"{statistics.median(reads) * 1e3:.2f} ms, p99 {read_p99 * 1e3:.2f} ms, "
        f"max {max(reads) * 1e3:.2f} ms ({len(reads)})"
    )
    assert summary == {"pending": calls, "finished": {}}, summary
