"""Every service's /metrics, checked by promtool and scraped by a real Prometheus;
the Grafana dashboard asks only for metrics the services serve."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.observability import promtool_check, scrape, start_prometheus
from support.waiting import wait_until

from taskyard.cli import procs

pytestmark = pytest.mark.acceptance

ROOT = Path(__file__).resolve().parents[2]
SUBMITTED = 25


@pytest.fixture
def measured(cluster_factory: Any) -> Any:
    return cluster_factory(metrics=True)


def _families(text: str) -> set[str]:
    # Counters are declared with their _total sample name; the family is the name without it.
    return {m.group(1).removesuffix("_total") for m in re.finditer(r"^# TYPE (\S+) ", text, re.M)}


def test_every_service_serves_valid_metrics_that_prometheus_scrapes(measured: Any, tmp_path: Path) -> None:
    ports = {f"taskyard-{service}": measured.metrics_ports[service] for service in procs.SERVICES}
    assert len(ports) == 4
    with measured.client() as client:
        ids = [client.submit("add", i, i).id for i in range(SUBMITTED)]
        for task_id in ids:
            client.wait(task_id, timeout=30)

    served: dict[str, set[str]] = {}
    for job, port in ports.items():
        text = scrape(port)
        checked = promtool_check(text)
        assert checked.returncode == 0, f"{job}: {checked.stdout}{checked.stderr}"
        served[job] = _families(text)
        assert "process_resident_memory_bytes" in served[job], job
        assert "taskyard_bus_messages_refused" in served[job], job
    assert {"taskyard_tasks_created", "taskyard_tasks_finished", "taskyard_store_commit_rows"} <= served[
        "taskyard-result-store"
    ]
    assert {"taskyard_lane_tasks", "taskyard_leases_rescued"} <= served["taskyard-scheduler"]
    assert {"taskyard_workers", "taskyard_task_run_seconds", "taskyard_task_queue_wait_seconds"} <= served[
        "taskyard-worker-pool"
    ]
    assert {"grpc_server_handled", "grpc_server_handling_seconds"} <= served["taskyard-gateway"]

    prometheus = start_prometheus(tmp_path / "prometheus", ports)
    try:
        wait_until(
            lambda: set(prometheus.targets_up().values()) == {"up"} and len(prometheus.targets_up()) == 4,
            30,
            lambda: f"every target up: {prometheus.targets_up()}",
        )

        def finished() -> float:
            found = prometheus.query('sum(taskyard_tasks_finished_total{name="add", state="SUCCESS"})')
            return float(found[0]["value"][1]) if found else 0.0

        assert wait_until(lambda: finished() == SUBMITTED, 30, lambda: f"{SUBMITTED} finished: {finished()}")
        runs = prometheus.query('sum(taskyard_task_run_seconds_count{name="add", outcome="success"})')
        assert float(runs[0]["value"][1]) == SUBMITTED
        calls = prometheus.query('sum(grpc_server_handled_total{grpc_method="SubmitTask", grpc_code="OK"})')
        assert float(calls[0]["value"][1]) == SUBMITTED

        # Every query of the Grafana dashboard has data on this healthy system: a
        # counter of what never happened here (rescued leases, refused bus
        # messages) reads 0, not "no data".
        dashboard = json.loads((ROOT / "deploy/grafana/taskyard.json").read_text())
        queries = [
            target["expr"].replace("$queue", ".*").replace("$__rate_interval", "10s")
            for panel in dashboard["panels"]
            for target in panel["targets"]
        ]

        def empty() -> list[str]:
            return [q for q in queries if not prometheus.query(q)]

        wait_until(lambda: not empty(), 30, lambda: f"data for every dashboard query, none for {empty()}")
    finally:
        prometheus.stop()

    # The dashboard's queries name only metrics some service serves.
    dashboard = json.loads((ROOT / "deploy/grafana/taskyard.json").read_text())
    every = set().union(*served.values())
    asked = {
        re.sub(r"_(bucket|count|sum|total)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b((?:taskyard|grpc_server|process)_[a-z_]+)\b", target["expr"])
    }
    assert asked and asked <= every, sorted(asked - every)


def test_metrics_off_loopback_need_a_token(tmp_path: Path) -> None:
    import urllib.error

    from taskyard.core import ops

    # Off loopback without a token, the ops port serves the probes only.
    bare = ops.OpsServer("0.0.0.0", 0)
    try:
        with pytest.raises(urllib.error.HTTPError) as forbidden:
            scrape(bare.port)
        assert forbidden.value.code == 403
    finally:
        bare.close()
    server = ops.OpsServer("127.0.0.1", 0, token="s3cret")
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            scrape(server.port)
        assert refused.value.code == 401
        assert "process_resident_memory_bytes" in scrape(server.port, token="s3cret")
    finally:
        server.close()
