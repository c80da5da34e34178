"""The Helm chart (deploy/helm/taskyard) as Kubernetes would run it, rendered by `helm template`
with the default and the production values, and the plain manifests generated from it
(deploy/k8s/taskyard.yaml): probes, resources, security contexts, drains, disruption
budgets, the autoscaler, the schedulers' and stores' StatefulSets, the settings each
pod's environment gives (every scheduler and store dialed by its pod's DNS name), and
which (source, port) pairs the NetworkPolicies let through from pod to pod."""
# Length: the chart's checks and the small NetworkPolicy evaluator they need (selectors,
# peers, ports), kept with the one picture of the rendered chart they share.

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import helm

from taskyard.core import health, variables
from taskyard.core.config import GatewaySettings, Settings
from taskyard.core.priority import LANES
from taskyard.gateway import server as gateway_server
from taskyard.scheduler import service as scheduler_service
from taskyard.worker_pool import manager as pool_manager

ROOT = helm.ROOT
CHART = helm.CHART
PRODUCTION = helm.EXAMPLES / "values-production.yaml"
K8S_MANIFESTS = ROOT / "deploy/k8s/taskyard.yaml"
NAMESPACE = helm.NAMESPACE
COMPONENTS = ("gateway", "scheduler", "result-store", "worker-pool")
# Run as StatefulSets: each pod has a name the others dial it by.
STATEFUL = ("scheduler", "result-store")
# Probed over HTTP, /livez and /readyz on their ops port, "metrics" (the gateway: grpc.health.v1).
HTTP_PROBED = ("scheduler", "result-store", "worker-pool")
# Who dials which named port of whom (docs/operations.md, "Hosts": who talks to whom), on
# every pod of it: the lists name every scheduler and every store.
DIALS: dict[str, dict[str, set[str]]] = {
    "gateway": {
        "scheduler": {"lane-critical", "lane-high", "lane-normal", "lane-low", "discovery"},
        "result-store": {"store", "events"},
    },
    "scheduler": {
        "scheduler": {"discovery"},
        "result-store": {"store", "sched-stream"},
        "worker-pool": {"pair"},
    },
    "worker-pool": {
        "scheduler": {
            "lane-critical",
            "lane-high",
            "lane-normal",
            "lane-low",
            "registration",
            "survey",
            "discovery",
        },
        "result-store": {"store", "pool-stream"},
    },
    "result-store": {},
}
POD_IP = "10.244.1.7"
SECRET_VALUES = {
    "TASKYARD_BUS_KEYS": "k1:" + base64.b64encode(bytes(range(32))).decode(),
    "TASKYARD_DATABASE_URL": "postgresql://taskyard:secret@db.internal:5432/taskyard",
    "TASKYARD_METRICS_TOKEN": "m" * 32,
}


def _render(*args: str, release: str = "taskyard") -> list[dict[str, Any]]:
    return helm.render(*args, release=release)


RENDERS = {
    "default": (),
    "production": ("-f", str(PRODUCTION)),
    "queue-depth": ("-f", str(PRODUCTION), "--set", "workerPool.autoscaling.queueDepth.enabled=true"),
}


# What each render's pod names end with after <pod>.<headless Service> (podDns): the
# namespace by default, the cluster domain too in production, neither in the plain
# manifests (applied to any namespace, completed by the pods' DNS search path).
POD_DOMAINS = {
    "default": f".{NAMESPACE}.svc",
    "production": f".{NAMESPACE}.svc.cluster.local",
    "queue-depth": f".{NAMESPACE}.svc.cluster.local",
    "k8s-manifests": "",
}
# Replicas by render: gateway, scheduler, result-store, worker-pool (None: autoscaled).
REPLICAS: dict[str, dict[str, int | None]] = {
    "default": {"gateway": 2, "scheduler": 2, "result-store": 2, "worker-pool": 2},
    "production": {"gateway": 2, "scheduler": 2, "result-store": 2, "worker-pool": None},
    "queue-depth": {"gateway": 2, "scheduler": 2, "result-store": 2, "worker-pool": None},
    "k8s-manifests": {"gateway": 2, "scheduler": 2, "result-store": 2, "worker-pool": 2},
}


@pytest.fixture(scope="module", params=[*RENDERS, "k8s-manifests"])
def render_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def docs(render_name: str) -> list[dict[str, Any]]:
    if render_name == "k8s-manifests":
        return [d for d in yaml.safe_load_all(K8S_MANIFESTS.read_text()) if d]
    return _render(*RENDERS[render_name])


def _of(docs: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def _component(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["labels"]["app.kubernetes.io/component"])


def _workloads(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each service's Deployment or StatefulSet, by component."""
    found = {_component(d): d for d in _of(docs, "Deployment") + _of(docs, "StatefulSet")}
    assert sorted(found) == sorted(COMPONENTS)
    for name, workload in found.items():
        assert workload["kind"] == ("StatefulSet" if name in STATEFUL else "Deployment"), name
    return found


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    return container


def _ports(workload: dict[str, Any]) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in _container(workload)["ports"]}


def _pod_names(workload: dict[str, Any]) -> list[str]:
    """The names of a workload's pods: <name>-<ordinal> for a StatefulSet, made-up ones
    (as a ReplicaSet makes them) for a Deployment; two when an autoscaler decides."""
    name = workload["metadata"]["name"]
    count = workload["spec"].get("replicas", 2)
    if workload["kind"] == "StatefulSet":
        return [f"{name}-{i}" for i in range(count)]
    return [f"{name}-7d9f8-x{i}q4z" for i in range(count)]


def _pod_labels(workload: dict[str, Any], pod: str) -> dict[str, str]:
    """A pod's labels as its controller sets them: the template's, plus the controller's own."""
    labels = dict(workload["spec"]["template"]["metadata"]["labels"])
    if workload["kind"] == "StatefulSet":
        ordinal = pod.rsplit("-", 1)[1]
        labels |= {"statefulset.kubernetes.io/pod-name": pod, "apps.kubernetes.io/pod-index": ordinal}
        labels["controller-revision-hash"] = f"{workload['metadata']['name']}-6b8c9d5f7"
    else:
        labels["pod-template-hash"] = "7d9f8"
    return labels


def _matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels and matchExpressions) against labels."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        held = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values}
        held |= {"Exists": key in labels, "DoesNotExist": key not in labels}
        if not held[op]:
            return False
    return True


def test_every_workload_has_probes_resources_and_a_locked_down_context(docs: list[dict[str, Any]]) -> None:
    workloads = _workloads(docs)
    for name, workload in workloads.items():
        pod = workload["spec"]["template"]["spec"]
        container = _container(workload)
        ports = _ports(workload)
        assert len(set(ports.values())) == len(ports), name  # no two listeners on one port
        assert {"readinessProbe", "livenessProbe"} <= container.keys(), name
        requests, limits = container["resources"]["requests"], container["resources"]["limits"]
        assert {"cpu", "memory"} <= requests.keys() and "memory" in limits, name
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 10001  # the Dockerfile's user
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        ctx = container["securityContext"]
        assert ctx["allowPrivilegeEscalation"] is False and ctx["readOnlyRootFilesystem"] is True
        assert ctx["capabilities"]["drop"] == ["ALL"]
        tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
        assert "emptyDir" in next(v for v in pod["volumes"] if v["name"] == tmp["name"])
        # Service links would add <SERVICE>_PORT variables to an environment read by prefix.
        assert pod["enableServiceLinks"] is False and pod["automountServiceAccountToken"] is False
    gateway = _container(workloads["gateway"])
    grpc_health = _ports(workloads["gateway"])["health"]
    # Readiness follows the stores (""), liveness only the gateway's own event loop.
    assert gateway["readinessProbe"]["grpc"] == {"port": grpc_health}
    liveness = {"port": grpc_health, "service": gateway_server.LIVENESS_SERVICE}
    assert gateway["livenessProbe"]["grpc"] == liveness


def test_the_scheduler_store_and_pools_are_probed_on_livez_and_readyz(docs: list[dict[str, Any]]) -> None:
    workloads = _workloads(docs)
    for name in HTTP_PROBED:
        workload = workloads[name]
        container = _container(workload)
        served = _ports(workload)["metrics"]
        assert "health" not in _ports(workload)  # one ops port: /metrics, /livez, /readyz
        for pod in _pod_names(workload):
            # The port the probes name is the one the service serves them on, on every
            # interface (a standby scheduler too: it opens no NNG listener, but this one),
            # with or without metrics (without a token: the probes alone).
            settings = Settings.from_env(_environment(docs, workload, pod))
            assert (settings.metrics_host, settings.metrics_port) == ("0.0.0.0", served), pod
            assert settings.metrics_served == bool(settings.metrics_token), pod
        paths = {"livenessProbe": "/livez", "readinessProbe": "/readyz"}
        if name == "result-store":
            paths["startupProbe"] = "/livez"  # a budget of its own for the start and migrations
        assert {k for k in container if k.endswith("Probe")} == paths.keys(), name
        for kind, path in paths.items():
            probe = container[kind]
            assert probe["httpGet"] == {"path": path, "port": "metrics"}, (name, kind)
            # The endpoints give the event loop LIVENESS_TIMEOUT to answer: a kubelet that
            # gave up sooner would count a merely busy service dead.
            assert probe["timeoutSeconds"] > health.LIVENESS_TIMEOUT, (name, kind)
    startup = _container(workloads["result-store"])["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600  # the 10 minutes the docs give
    # The gateway's probes are gRPC: an ops port there only to serve /metrics.
    gateway = workloads["gateway"]
    edge = Settings.from_env(_environment(docs, gateway, _pod_names(gateway)[0]))
    assert bool(edge.metrics_port) == edge.metrics_served == ("metrics" in _ports(gateway))


def test_several_of_every_service_schedulers_and_stores_as_stateful_sets(
    docs: list[dict[str, Any]], render_name: str
) -> None:
    workloads = _workloads(docs)
    assert {n: w["spec"].get("replicas") for n, w in workloads.items()} == REPLICAS[render_name]
    services = {s["metadata"]["name"]: s for s in _of(docs, "Service")}
    for name in STATEFUL:
        spec = workloads[name]["spec"]
        # Any scheduler may lead and any store may start first (migrations lock in the
        # database); upgrades replace one pod at a time, the others serving.
        assert spec["podManagementPolicy"] == "Parallel"
        assert spec["updateStrategy"] == {"type": "RollingUpdate"}
        headless = services[spec["serviceName"]]["spec"]
        assert headless["clusterIP"] == "None"
        assert _matches({"matchLabels": headless["selector"]}, spec["template"]["metadata"]["labels"])
        # Every pod's name resolves, ready or not: a standby scheduler listens on nothing.
        assert headless["publishNotReadyAddresses"] is True


def test_termination_grace_covers_each_drain(docs: list[dict[str, Any]]) -> None:
    workloads = _workloads(docs)
    pool = workloads["worker-pool"]
    settings = Settings.from_env(_environment(docs, pool, _pod_names(pool)[0]))
    # Manager._shutdown: the draining beat (2 s), the workers' shutdown timeout, the last
    # sends (1 s), the report flush, the lease hand-back (2 s), the last beat (1 s), its loops.
    drain = settings.shutdown_timeout + 2 + 1 + pool_manager.REPORT_FLUSH_TIMEOUT + 2 + 1
    drain += pool_manager.TASKS_END_TIMEOUT
    assert pool["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= drain
    # Gateway.stop: calls in flight, the lanes' drain and its loops, each within the grace.
    gateway = workloads["gateway"]
    grace = GatewaySettings.from_env(_environment(docs, gateway, _pod_names(gateway)[0])).grpc_stop_grace
    pre_stop = _container(gateway).get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    waited = int(pre_stop[-1]) if pre_stop else 0
    assert gateway["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= waited + 3 * grace
    # A leading scheduler: its loops end, then it releases the leadership (a request given
    # up after half the TTL), so a standby takes over at once rather than after the TTL.
    scheduler = workloads["scheduler"]
    ttl = Settings.from_env(_environment(docs, scheduler, _pod_names(scheduler)[0])).leader_ttl
    handover = scheduler_service.TASKS_END_TIMEOUT + ttl / 2  # Election._timeout: ttl / 2
    assert scheduler["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= handover


def test_a_disruption_budget_for_each_service(docs: list[dict[str, Any]]) -> None:
    workloads = _workloads(docs)
    budgets = _of(docs, "PodDisruptionBudget")
    for name, workload in workloads.items():
        pods = _pod_names(workload)
        covering = [
            b for b in budgets if all(_matches(b["spec"]["selector"], _pod_labels(workload, p)) for p in pods)
        ]
        assert len(covering) == 1, name
        others = [w for n, w in workloads.items() if n != name]
        assert not any(
            _matches(covering[0]["spec"]["selector"], _pod_labels(w, p))
            for w in others
            for p in _pod_names(w)
        )
        # A drain may evict one at a time and never every one: of 2 schedulers one is
        # left to lead (maxUnavailable 1 is minAvailable 1 then), of 2 stores one answers.
        budget = covering[0]["spec"]
        if "minAvailable" in budget:
            evictable = len(pods) - int(budget["minAvailable"])
        else:
            evictable = int(budget["maxUnavailable"])
        assert 1 <= evictable < len(pods), name


def test_the_autoscaler_scales_the_pools_only_when_asked() -> None:
    assert not _of(_render(), "HorizontalPodAutoscaler")
    docs = _render(*RENDERS["queue-depth"])
    (hpa,) = _of(docs, "HorizontalPodAutoscaler")
    pool = _workloads(docs)["worker-pool"]
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == (
        "apps/v1",
        "Deployment",
        pool["metadata"]["name"],
    )
    assert "replicas" not in pool["spec"]  # the autoscaler owns it
    assert hpa["spec"]["minReplicas"] == 3
    kinds = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert kinds["Resource"]["resource"]["name"] == "cpu"
    assert kinds["External"]["external"]["metric"]["name"] == "taskyard_queue_tasks"
    assert kinds["External"]["external"]["metric"]["selector"]["matchLabels"] == {"state": "QUEUED"}


def test_services_route_to_the_ports_their_pods_declare(docs: list[dict[str, Any]]) -> None:
    workloads = _workloads(docs)
    listeners = {
        "scheduler": {
            "lane-critical",
            "lane-high",
            "lane-normal",
            "lane-low",
            "registration",
            "survey",
            "discovery",
        },
        "result-store": {"store", "events", "pool-stream", "sched-stream"},
    }
    for service in _of(docs, "Service"):
        selected = [
            n
            for n, d in workloads.items()
            if _matches(
                {"matchLabels": service["spec"]["selector"]}, d["spec"]["template"]["metadata"]["labels"]
            )
        ]
        if service["metadata"]["name"].endswith("-metrics"):  # metrics.serviceMonitor: every pod
            assert sorted(selected) == sorted(COMPONENTS)
            assert [p["targetPort"] for p in service["spec"]["ports"]] == ["metrics"]
            assert all(
                _ports(w)["metrics"] == service["spec"]["ports"][0]["port"] for w in workloads.values()
            )
            continue
        (name,) = selected
        ports = _ports(workloads[name])
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, (name, port)
        if name in listeners:  # exactly what the service listens on, each on its own number
            assert {p["targetPort"] for p in service["spec"]["ports"]} == listeners[name]
            assert all(p["port"] == ports[p["targetPort"]] for p in service["spec"]["ports"])


# --- the environment each container gets, read by Settings.from_env


def _expand(value: str, env: Mapping[str, str]) -> str:
    """Kubernetes' $(VAR) expansion of an env value: variables defined before it are
    replaced, $$ is a literal $, anything else stays as written."""
    return re.sub(
        r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
        lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)),
        value,
    )


def _environment(docs: list[dict[str, Any]], workload: dict[str, Any], pod: str) -> dict[str, str]:
    """Pod ``pod``'s: ConfigMap, then env (which wins), with the downward API, Secrets and
    $(VAR) references filled in."""
    container = _container(workload)
    maps = {m["metadata"]["name"]: m["data"] for m in _of(docs, "ConfigMap")}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(maps[source["configMapRef"]["name"]])
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = _expand(str(var["value"]), env)
        elif "fieldRef" in var["valueFrom"]:
            env[var["name"]] = {"status.podIP": POD_IP, "metadata.name": pod}[
                var["valueFrom"]["fieldRef"]["fieldPath"]
            ]
        else:
            assert "secretKeyRef" in var["valueFrom"], var
            env[var["name"]] = SECRET_VALUES[var["name"]]
    return env


def _address(url: str) -> tuple[str, int]:
    scheme, _, rest = url.partition("://")
    assert scheme in ("tcp", "tls+tcp"), url
    host, port = rest.rsplit(":", 1)
    return host, int(port)


def _dials(settings: Settings, name: str) -> dict[str, tuple[str, ...]]:
    """Every address a service dials, by the named port it means to reach."""
    lanes = {f"lane-{p.name.lower()}": settings.lane_addresses(p) for p in LANES}
    every = {
        **lanes,
        "discovery": settings.discovery_addresses,
        "registration": settings.registration_addresses,
        "survey": settings.survey_addresses,
        "store": settings.store_addresses,
        "events": settings.events_addresses,
        "pool-stream": settings.pool_stream_addresses,
        "sched-stream": settings.scheduler_stream_addresses,
    }
    wanted = set().union(*DIALS[name].values()) - {"pair"}
    return {port: every[port] for port in wanted}


def _pod_hosts(docs: list[dict[str, Any]], render_name: str) -> dict[str, tuple[str, ...]]:
    """Each StatefulSet's pods by their DNS names: <pod>.<headless Service>[.<ns>.svc...]."""
    workloads = _workloads(docs)
    return {
        name: tuple(
            f"{pod}.{workloads[name]['spec']['serviceName']}{POD_DOMAINS[render_name]}"
            for pod in _pod_names(workloads[name])
        )
        for name in STATEFUL
    }


def test_each_pods_environment_gives_listeners_and_dials_to_every_scheduler_and_store_pod(
    docs: list[dict[str, Any]], render_name: str
) -> None:
    workloads = _workloads(docs)
    services = {s["metadata"]["name"]: s for s in _of(docs, "Service")}
    hosts = _pod_hosts(docs, render_name)
    # The named ports of the pods behind each DNS name, as the headless Service lists them.
    by_host = {
        host: (
            name,
            {
                p["port"]: p["targetPort"]
                for p in services[workloads[name]["spec"]["serviceName"]]["spec"]["ports"]
            },
        )
        for name in STATEFUL
        for host in hosts[name]
    }
    known = {n for f in Settings.model_fields.values() for n in variables.names(f)}
    for name, workload in workloads.items():
        for pod in _pod_names(workload):
            env = _environment(docs, workload, pod)
            assert {v for v in env if v.startswith("TASKYARD_")} <= known, name
            settings = Settings.from_env(env)
            ports = _ports(workload)
            # tls+tcp where the values name a Secret of bus certificates (test_helm_bus_tls.py).
            assert settings.transport == ("tls+tcp" if settings.bus_tls_ca else "tcp"), name
            assert settings.bus_keys, name
            assert bool(settings.database_url) == (name == "result-store")
            # Every scheduler and every store, by the names of their pods, in every pod.
            assert settings.effective_scheduler_hosts == hosts["scheduler"], pod
            assert settings.effective_store_hosts == hosts["result-store"], pod
            listening = {
                "scheduler": {
                    **{f"lane-{p.name.lower()}": settings.lane_listen_address(p) for p in LANES},
                    "registration": settings.registration_listen_address,
                    "survey": settings.survey_listen_address,
                    "discovery": settings.discovery_listen_address,
                },
                "result-store": {
                    "store": settings.store_listen_address,
                    "events": settings.events_listen_address,
                    "pool-stream": settings.pool_stream_listen_address,
                    "sched-stream": settings.scheduler_stream_listen_address,
                },
                "worker-pool": {"pair": settings.pool_pair_listen_address("p1")},
                "gateway": {},
            }[name]
            for port_name, url in listening.items():
                assert _address(url) == ("0.0.0.0", ports[port_name]), (name, port_name)
            for port_name, urls in _dials(settings, name).items():
                (target,) = [t for t, named in DIALS[name].items() if port_name in named]
                reached = set()
                for url in urls:
                    host, port = _address(url)
                    owner, named_ports = by_host[host]  # a pod of the chart's, by name
                    assert (owner, named_ports.get(port)) == (target, port_name), (pod, url)
                    reached.add(host)
                assert reached == set(hosts[target]), (pod, port_name)  # each of them
            if name == "scheduler":
                # Pools dial the survey address a leader hands them: its own pod, by name.
                host, port = _address(settings.advertised_survey_address)
                assert host == next(h for h in hosts["scheduler"] if h.startswith(f"{pod}."))
                owner, named_ports = by_host[host]
                assert (owner, named_ports.get(port)) == ("scheduler", "survey")
            if settings.metrics_port:
                assert (settings.metrics_host, settings.metrics_port) == ("0.0.0.0", ports["metrics"])
            if "metrics" in ports and name == "gateway":
                assert settings.metrics_token  # the gateway's ops port is there for /metrics
    pool = workloads["worker-pool"]
    pool_settings = Settings.from_env(_environment(docs, pool, _pod_names(pool)[0]))
    pair = _ports(pool)["pair"]
    scheme = pool_settings.transport
    assert (
        pool_settings.advertised_pair_address(f"{scheme}://0.0.0.0:{pair}") == f"{scheme}://{POD_IP}:{pair}"
    )
    gateway = workloads["gateway"]
    edge = Settings.from_env(_environment(docs, gateway, _pod_names(gateway)[0]))
    ports = _ports(gateway)
    assert (edge.grpc_host, edge.grpc_port, edge.grpc_health_port) == (
        "0.0.0.0",
        ports["grpc"],
        ports["health"],
    )
    assert edge.http_port == ports.get("http", 0)
    mounts = {m["mountPath"]: m["name"] for m in _container(gateway)["volumeMounts"]}
    volumes = {v["name"]: v for v in gateway["spec"]["template"]["spec"]["volumes"]}
    for path in (edge.grpc_tls_cert, edge.grpc_tls_key, edge.grpc_tokens_file):
        assert "secret" in volumes[mounts[str(Path(path).parent)]], path
    assert not edge.grpc_allow_insecure


@pytest.mark.parametrize(("schedulers", "stores", "listed"), [(3, 1, (3, 1)), (1, 4, (1, 4)), (0, 0, (1, 1))])
def test_the_dial_lists_follow_the_replicas(schedulers: int, stores: int, listed: tuple[int, int]) -> None:
    docs = _render("--set", f"scheduler.replicas={schedulers},resultStore.replicas={stores}")
    (config,) = _of(docs, "ConfigMap")
    lists = [config["data"][v].split(",") for v in ("TASKYARD_SCHEDULER_HOSTS", "TASKYARD_STORE_HOSTS")]
    # With none running, the first pod's name: where it comes back (scaling 0 <-> 1
    # changes no other pod's environment, so restarts none).
    assert (len(lists[0]), len(lists[1])) == listed
    assert lists[0][-1] == f"taskyard-scheduler-{listed[0] - 1}.taskyard-scheduler.{NAMESPACE}.svc"
    assert lists[1][-1] == f"taskyard-result-store-{listed[1] - 1}.taskyard-result-store.{NAMESPACE}.svc"


def test_a_long_release_name_still_gives_valid_names() -> None:
    docs = _render(release="r" * 53)  # the longest Helm allows
    for workload in _workloads(docs).values():
        name = workload["metadata"]["name"]
        if workload["kind"] == "StatefulSet":
            # Its pods' controller-revision-hash label is the name plus 11 characters.
            assert len(name) <= 52, name
            assert all(len(p) <= 63 for p in _pod_names(workload))  # DNS labels
        assert len(name) <= 63, name
    assert all(len(s["metadata"]["name"]) <= 63 for s in _of(docs, "Service"))


# --- NetworkPolicies: which (source, port) pairs get through


@dataclass(frozen=True)
class Peer:
    """A traffic source or destination: a pod (with its namespace) or an outside address;
    ``service`` is the suite's service a pod belongs to (empty for the others)."""

    name: str
    ip: str
    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    ports: Mapping[str, int] = field(default_factory=dict, hash=False)
    service: str = ""

    @property
    def role(self) -> str:
        """What the expectations name it by: its service, or its own name."""
        return self.service or self.name


def _in_namespace(peer: Peer, selector: Mapping[str, Any]) -> bool:
    return peer.namespace is not None and _matches(selector, {"kubernetes.io/metadata.name": peer.namespace})


def _peer_matches(rule: Mapping[str, Any], peer: Peer) -> bool:
    if "ipBlock" in rule:
        ip = ipaddress.ip_address(peer.ip)
        block = rule["ipBlock"]
        return ip in ipaddress.ip_network(block["cidr"]) and not any(
            ip in ipaddress.ip_network(e) for e in block.get("except", [])
        )
    if peer.namespace is None:
        return False
    if "namespaceSelector" in rule and not _in_namespace(peer, rule["namespaceSelector"]):
        return False
    if "namespaceSelector" not in rule and peer.namespace != NAMESPACE:
        return False
    return "podSelector" not in rule or _matches(rule["podSelector"], peer.labels)


def _port_matches(
    rules: list[dict[str, Any]] | None, port: int, protocol: str, named: Mapping[str, int]
) -> bool:
    if not rules:
        return True
    for rule in rules:
        wanted = rule.get("port")
        number = named.get(wanted) if isinstance(wanted, str) else wanted
        if rule.get("protocol", "TCP") == protocol and (
            wanted is None or (number is not None and number <= port <= rule.get("endPort", number))
        ):
            return True
    return False


def _allowed(
    policies: list[dict[str, Any]], direction: str, pod: Peer, other: Peer, port: int, protocol: str
) -> bool:
    """Whether the policies selecting ``pod`` let ``other`` in (Ingress) or let ``pod``
    reach ``other`` (Egress) on ``port``; a pod no policy selects is not isolated."""
    key, peers = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    named = pod.ports if direction == "Ingress" else other.ports
    selecting = [
        p
        for p in policies
        if pod.namespace == NAMESPACE
        and _matches(p["spec"]["podSelector"], pod.labels)
        and direction in p["spec"].get("policyTypes", ["Ingress"])
    ]
    if not selecting:
        return True
    return any(
        _port_matches(rule.get("ports"), port, protocol, named)
        and (not rule.get(peers) or any(_peer_matches(r, other) for r in rule[peers]))
        for policy in selecting
        for rule in policy["spec"].get(key) or []
    )


def _suite(docs: list[dict[str, Any]]) -> list[Peer]:
    """Every pod of the suite (each scheduler, leader or standby, alike), with the labels
    its controller gives it."""
    pods = [
        (name, workload, pod)
        for name, workload in sorted(_workloads(docs).items())
        for pod in _pod_names(workload)
    ]
    return [
        Peer(pod, f"10.244.0.{n}", NAMESPACE, _pod_labels(w, pod), _ports(w), service=name)
        for n, (name, w, pod) in enumerate(pods, 10)
    ]


OUTSIDERS = [
    Peer("a pod of another app", "10.244.0.50", NAMESPACE, {"app": "other"}),
    Peer("another namespace", "10.244.0.51", "elsewhere", {"app": "other"}),
    Peer("ingress controller", "10.244.0.52", "ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"}),
    Peer("prometheus", "10.244.0.53", "monitoring", {"app.kubernetes.io/name": "prometheus"}),
    Peer("office", "203.0.113.7"),
    Peer("internet", "198.51.100.9"),
    Peer("kubelet", "10.0.0.5"),  # a node, whose kubelet probes the pods
]
# The renders whose policies are evaluated; "probe-sources" lists the nodes in
# networkPolicy.probeFrom, as on a network plugin that applies policies to the kubelet's probes.
POLICY_RENDERS = {
    "default": RENDERS["default"],
    "production": RENDERS["production"],
    "probe-sources": (*RENDERS["production"], "--set", "networkPolicy.probeFrom[0].ipBlock.cidr=10.0.0.0/16"),
}


def _reachable(docs: list[dict[str, Any]]) -> Iterator[tuple[Peer, Peer, str]]:
    """Every (source, destination pod, port name) the policies let through to the suite's pods."""
    policies = _of(docs, "NetworkPolicy")
    suite = _suite(docs)
    for dest in suite:
        for port_name, port in dest.ports.items():
            for source in [*suite, *OUTSIDERS]:
                egress = not source.service or _allowed(policies, "Egress", source, dest, port, "TCP")
                if egress and _allowed(policies, "Ingress", dest, source, port, "TCP"):
                    yield source, dest, port_name


@pytest.mark.parametrize("render", POLICY_RENDERS)
def test_network_policies_let_through_exactly_the_suites_own_traffic_and_the_configured_clients(
    render: str,
) -> None:
    docs = _render(*POLICY_RENDERS[render])
    reached = list(_reachable(docs))
    allowed = {(src.role, dst.role, port) for src, dst, port in reached}
    internal = {
        (src, dst, port) for src, targets in DIALS.items() for dst, ports in targets.items() for port in ports
    }
    if render == "default":  # gateway.from empty: any client
        edge = {(o.name, "gateway", "grpc") for o in OUTSIDERS}
        # The pools reach anywhere (workerPool.egressAnywhere): a task may call the API. No
        # other pod of the suite calls it, and a pool reaches no other port of the suite's.
        edge.add(("worker-pool", "gateway", "grpc"))
    else:
        edge = {("ingress controller", "gateway", "grpc"), ("office", "gateway", "grpc")}
        edge |= {("ingress controller", "gateway", "http")}
        edge |= {("prometheus", dst, "metrics") for dst in COMPONENTS}
    if render == "probe-sources":  # the port every service's probes ask: gRPC health or the ops port
        edge |= {("kubelet", "gateway", "health")}
        edge |= {("kubelet", dst, "metrics") for dst in HTTP_PROBED}
    assert allowed == internal | edge
    # The brief's rule, plainly: the NNG ports are reached by the suite's own pods alone,
    # the gateway's health port by the probes' sources alone, the ops ports by them and
    # the scrapers.
    outer = {"grpc", "http", "metrics", "health"}
    assert all(src in COMPONENTS for src, _, port in allowed if port not in outer)
    assert all(src == "kubelet" for src, _, port in allowed if port == "health")
    assert all(src in {"kubelet", "prometheus"} for src, _, port in allowed if port == "metrics")
    # Pod by pod: whatever reaches one pod of a service reaches each of them, so every
    # standby scheduler is reached as the leader is (it may lead next), every store alike.
    pairs = {(src.name, dst.name, port) for src, dst, port in reached}
    suite = _suite(docs)
    for src in [*suite, *OUTSIDERS]:
        for dst in suite:
            for port in dst.ports:
                expected = (src.role, dst.role, port) in allowed
                assert ((src.name, dst.name, port) in pairs) == expected, (src.name, dst.name, port)
    assert sum(p.service == "scheduler" for p in suite) == 2


def _outside(render: str) -> list[tuple[Peer, int, str]]:
    dns = Peer("dns", "10.96.0.10", "kube-system", {"k8s-app": "kube-dns"})
    collector = Peer("collector", "10.244.9.9", "observability", {"app.kubernetes.io/name": "otel-collector"})
    database = Peer("database", "10.20.0.10" if render == "production" else "172.20.0.5")
    return [
        (dns, 53, "UDP"),
        (dns, 53, "TCP"),
        (dns, 9153, "TCP"),  # DNS's pods, but not DNS
        (database, 5432, "TCP"),
        (collector, 4317, "TCP"),
        (Peer("internet", "198.51.100.9"), 443, "TCP"),
        (Peer("internet", "198.51.100.9"), 5432, "TCP"),
        (Peer("a pod of another app", "10.244.0.50", NAMESPACE, {"app": "other"}), 8080, "TCP"),
    ]


EGRESS_RENDERS = {
    "default": RENDERS["default"],
    "production": RENDERS["production"],  # egressAnywhere false, HTTPS outside the private ranges
    "restricted": ("--set", "workerPool.egressAnywhere=false"),
}


@pytest.mark.parametrize("render", EGRESS_RENDERS)
def test_pools_reach_anywhere_by_default_the_other_services_only_dns_postgres_and_the_collector(
    render: str,
) -> None:
    docs = _render(*EGRESS_RENDERS[render])
    policies = _of(docs, "NetworkPolicy")
    outside = _outside(render)
    allowed = {
        (pod.service, dest.name, port, protocol)
        for pod in _suite(docs)
        for dest, port, protocol in outside
        if _allowed(policies, "Egress", pod, dest, port, protocol)
    }
    expected = {(c, "dns", 53, p) for c in COMPONENTS for p in ("UDP", "TCP")}
    expected.add(("result-store", "database", 5432, "TCP"))
    if render == "production":
        expected |= {(c, "collector", 4317, "TCP") for c in COMPONENTS}
        expected.add(("worker-pool", "internet", 443, "TCP"))  # workerPool.extraEgress
    else:  # no database peers configured: PostgreSQL's port, anywhere
        expected.add(("result-store", "internet", 5432, "TCP"))
    if render == "default":  # the tasks call APIs: every destination, every port
        expected |= {("worker-pool", dest.name, port, protocol) for dest, port, protocol in outside}
    assert allowed == expected


def _leaves(values: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield prefix + key


def test_the_charts_readme_documents_every_value() -> None:
    rows = set(re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", (CHART / "README.md").read_text(), re.MULTILINE))
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    missing = [v for v in _leaves(values) if not any(v == r or v.startswith(r + ".") for r in rows)]
    assert not missing


def test_every_pod_of_the_suite_is_isolated_by_the_default_deny() -> None:
    docs = _render()
    (deny,) = [
        p for p in _of(docs, "NetworkPolicy") if not p["spec"].get("ingress") and not p["spec"].get("egress")
    ]
    assert sorted(deny["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    for peer in _suite(docs):
        assert _matches(deny["spec"]["podSelector"], peer.labels), peer.name
