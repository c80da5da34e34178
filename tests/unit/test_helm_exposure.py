"""The chart's optional ways in and out, rendered by `helm template`: the Ingress, the Gateway
API routes (GRPCRoute, HTTPRoute) and the Prometheus Operator's ServiceMonitor, each off by
default, each routing to what the gateway's Service and pods really serve; the values that
cannot work refused with what to set; and the chart rendered exactly as docs/kubernetes.md
says, with helm's own default Kubernetes version."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import helm

PRODUCTION = helm.EXAMPLES / "values-production.yaml"
GATEWAY_API = helm.EXAMPLES / "values-gateway-api.yaml"
OPTIONAL_KINDS = {"Ingress", "GRPCRoute", "HTTPRoute", "ServiceMonitor"}


def _one(docs: list[dict[str, Any]], kind: str, component: str) -> dict[str, Any]:
    (found,) = [
        d for d in helm.of(docs, kind) if d["metadata"]["labels"]["app.kubernetes.io/component"] == component
    ]
    return found


def _gateway_service_ports(docs: list[dict[str, Any]]) -> dict[str, int]:
    service = _one(docs, "Service", "gateway")
    return {p["name"]: p["port"] for p in service["spec"]["ports"]}


def test_none_of_them_by_default() -> None:
    docs = helm.render()
    assert not [d for d in docs if d["kind"] in OPTIONAL_KINDS]
    assert not [s for s in helm.of(docs, "Service") if s["metadata"]["name"].endswith("-metrics")]


def test_a_plain_helm_template_renders_the_chart_as_documented() -> None:
    # docs/kubernetes.md, exactly: no --kube-version, so helm's default Kubernetes version
    # must satisfy Chart.yaml's kubeVersion and every template.
    command = "helm template taskyard deploy/helm/taskyard"
    assert f"\n{command}\n" in (helm.ROOT / "docs/kubernetes.md").read_text()
    done = subprocess.run(
        [helm.helm(), *command.split()[1:]],
        cwd=helm.ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(done.stdout) if d}
    assert {"Deployment", "StatefulSet", "NetworkPolicy", "PodDisruptionBudget"} <= kinds
    # The constraint is the chart's real floor (the kubelet's grpc probes), not lowered for helm.
    chart = yaml.safe_load((helm.CHART / "Chart.yaml").read_text())
    assert chart["kubeVersion"] == ">=1.27.0-0"
    refused = helm.run("template", "taskyard", str(helm.CHART), "--kube-version", "1.26.0")
    assert refused.returncode != 0 and "kubeVersion" in refused.stderr


def test_the_ingress_routes_to_the_dashboard_port_of_the_gateway_service() -> None:
    docs = helm.render("-f", str(PRODUCTION))
    ingress = _one(docs, "Ingress", "gateway")
    spec = ingress["spec"]
    assert spec["ingressClassName"] == "nginx"
    assert ingress["metadata"]["annotations"] == {"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS"}
    assert spec["tls"] == [{"hosts": ["taskyard.example.com"], "secretName": "taskyard-dashboard-tls"}]
    (rule,) = spec["rules"]
    assert rule["host"] == "taskyard.example.com"
    (path,) = rule["http"]["paths"]
    assert (path["path"], path["pathType"]) == ("/", "Prefix")
    backend = path["backend"]["service"]
    gateway = _one(docs, "Service", "gateway")
    assert backend["name"] == gateway["metadata"]["name"]
    assert backend["port"]["name"] in _gateway_service_ports(docs) and backend["port"]["name"] == "http"


def test_the_ingress_to_the_grpc_port_for_any_host() -> None:
    docs = helm.render("--set", "gateway.ingress.enabled=true")
    (rule,) = _one(docs, "Ingress", "gateway")["spec"]["rules"]
    assert "host" not in rule
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"]["port"] == {"name": "grpc"}
    assert "grpc" in _gateway_service_ports(docs)


def test_the_gateway_api_routes_reach_the_grpc_port_and_the_dashboard() -> None:
    docs = helm.render("-f", str(GATEWAY_API))
    ports = _gateway_service_ports(docs)
    service = _one(docs, "Service", "gateway")["metadata"]["name"]
    expected = {
        "GRPCRoute": (ports["grpc"], ["grpc.taskyard.example.com"], "grpc"),
        "HTTPRoute": (ports["http"], ["taskyard.example.com"], "https"),
    }
    for kind, (port, hostnames, listener) in expected.items():
        route = _one(docs, kind, "gateway")
        assert route["apiVersion"] == "gateway.networking.k8s.io/v1"
        spec = route["spec"]
        assert spec["parentRefs"] == [{"name": "public", "namespace": "gateways", "sectionName": listener}]
        assert spec["hostnames"] == hostnames
        (rule,) = spec["rules"]
        assert rule["backendRefs"] == [{"name": service, "port": port}], kind


def test_the_service_monitor_scrapes_every_pod_with_the_metrics_token() -> None:
    docs = helm.render("-f", str(PRODUCTION))
    (monitor,) = helm.of(docs, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    spec = monitor["spec"]
    # It selects the metrics Service, and nothing else of the chart's.
    selected = [
        s
        for s in helm.of(docs, "Service")
        if all(s["metadata"]["labels"].get(k) == v for k, v in spec["selector"]["matchLabels"].items())
    ]
    (service,) = selected
    assert spec["namespaceSelector"] == {"matchNames": [helm.NAMESPACE]}
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    (endpoint,) = spec["endpoints"]
    assert (endpoint["port"], endpoint["path"], endpoint["interval"]) == ("metrics", "/metrics", "30s")
    assert [p["name"] for p in service["spec"]["ports"]] == ["metrics"]
    # The Service's endpoints are every pod of the suite, on the port each declares "metrics".
    workloads = helm.of(docs, "Deployment") + helm.of(docs, "StatefulSet")
    assert len(workloads) == 4
    for workload in workloads:
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in service["spec"]["selector"].items())
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        assert "metrics" in {p["name"] for p in container["ports"]}
        # Prometheus sends the token the pods check, from the same Secret.
        (token,) = [e for e in container["env"] if e["name"] == "TASKYARD_METRICS_TOKEN"]
        assert endpoint["authorization"] == {
            "type": "Bearer",
            "credentials": token["valueFrom"]["secretKeyRef"],
        }
    assert spec["podTargetLabels"] == ["app.kubernetes.io/component"]


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (("--set", "metrics.serviceMonitor.enabled=true"), "metrics.serviceMonitor needs metrics.enabled"),
        (("--set", "gateway.grpcRoute.enabled=true"), "gateway.grpcRoute.parentRefs is empty"),
        (
            ("--set", "gateway.httpRoute.enabled=true,gateway.httpRoute.parentRefs[0].name=public"),
            "gateway.httpRoute routes to the dashboard: enable gateway.dashboard",
        ),
        (
            ("--set", "gateway.ingress.enabled=true,gateway.ingress.servicePort=http"),
            "gateway.ingress.servicePort http routes to the dashboard: enable gateway.dashboard",
        ),
        (("--set", "gateway.ingress.servicePort=tcp"), "servicePort"),  # the schema's enum
    ],
)
def test_values_that_cannot_work_are_refused_with_what_to_set(values: tuple[str, ...], says: str) -> None:
    assert says in helm.refusal(*values)


def test_the_validator_skips_only_the_custom_kinds_it_names(tmp_path: Path) -> None:
    """make helm-check's schema check: the custom resources are named as not validated; a kind
    Kubernetes does not have (a misspelt apiVersion) fails rather than passing with a warning."""
    rendered = tmp_path / "rendered.yaml"
    docs = helm.render("-f", str(PRODUCTION)) + helm.render("-f", str(GATEWAY_API))
    rendered.write_text(yaml.safe_dump_all(docs))
    script = str(helm.ROOT / "tools/validate_manifests.py")
    python = sys.executable
    done = subprocess.run(
        [python, script, "-k", helm.KUBE_VERSION, str(rendered)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"custom resources not validated: GRPCRoute x1, HTTPRoute x1, ServiceMonitor x1", done.stdout
    )
    typo = dict(_one(docs, "Ingress", "gateway"), apiVersion="networking.k8s.io/v1beta3")
    rendered.write_text(yaml.safe_dump(typo))
    done = subprocess.run(
        [python, script, "-k", helm.KUBE_VERSION, str(rendered)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "has no such kind" in done.stderr
