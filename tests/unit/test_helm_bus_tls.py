"""The Helm chart runs the bus over TLS when given a Secret of bus certificates
(docs/security.md, "TLS on the bus"): every service reads the same three files from it;
without one, plain tcp and no such volume."""

from __future__ import annotations

from typing import Any

from support import helm

COMPONENTS = {"gateway", "scheduler", "result-store", "worker-pool"}
MOUNT = "/etc/taskyard/bus-tls"


def _config(docs: list[dict[str, Any]]) -> dict[str, str]:
    [config] = [d for d in docs if d["kind"] == "ConfigMap" and "TASKYARD_TRANSPORT" in d.get("data", {})]
    data: dict[str, str] = config["data"]
    return data


def _bus_tls_secrets(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The Secret each workload mounts at MOUNT, by component."""
    found: dict[str, str] = {}
    for doc in docs:
        if doc["kind"] not in ("Deployment", "StatefulSet"):
            continue
        component = doc["metadata"]["labels"]["app.kubernetes.io/component"]
        pod = doc["spec"]["template"]["spec"]
        [container] = [c for c in pod["containers"] if c["name"] == component]
        mounted = {m["name"] for m in container.get("volumeMounts", []) if m["mountPath"] == MOUNT}
        for volume in pod.get("volumes", []):
            if volume["name"] in mounted:
                found[component] = volume["secret"]["secretName"]
    return found


def test_by_default_the_bus_is_plain_tcp() -> None:
    docs = helm.render()
    assert _config(docs)["TASKYARD_TRANSPORT"] == "tcp"
    assert not any(k.startswith("TASKYARD_BUS_TLS_") for k in _config(docs))
    assert _bus_tls_secrets(docs) == {}


def test_a_secret_of_bus_certificates_turns_tls_on_everywhere() -> None:
    docs = helm.render("--set", "bus.tls.secret=bus-certs,bus.tls.serverName=bus.internal")
    config = _config(docs)
    assert config["TASKYARD_TRANSPORT"] == "tls+tcp"
    assert {k: v for k, v in config.items() if k.startswith("TASKYARD_BUS_TLS_")} == {
        "TASKYARD_BUS_TLS_CA": f"{MOUNT}/ca.crt",
        "TASKYARD_BUS_TLS_CERT": f"{MOUNT}/tls.crt",
        "TASKYARD_BUS_TLS_KEY": f"{MOUNT}/tls.key",
        "TASKYARD_BUS_TLS_SERVER_NAME": "bus.internal",
    }
    assert _bus_tls_secrets(docs) == dict.fromkeys(COMPONENTS, "bus-certs")


def test_the_production_example_encrypts_the_bus() -> None:
    docs = helm.render("-f", str(helm.EXAMPLES / "values-production.yaml"))
    assert _config(docs)["TASKYARD_TRANSPORT"] == "tls+tcp"
    assert _bus_tls_secrets(docs) == dict.fromkeys(COMPONENTS, "taskyard-bus-tls")
