"""The Helm chart gives each service its own bus keyring when asked (docs/security.md,
"Keys per role"): a Secret per service, as the production example does; without one,
every service keeps the shared keys it had."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import helm

from taskyard.core import seal

COMPONENTS = ("gateway", "scheduler", "result-store", "worker-pool")
VALUES_KEY = {
    "gateway": "gateway",
    "scheduler": "scheduler",
    "result-store": "resultStore",
    "worker-pool": "workerPool",
}


def _bus_keys_refs(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each service's TASKYARD_BUS_KEYS secretKeyRef, by component."""
    refs: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc["kind"] not in ("Deployment", "StatefulSet"):
            continue
        component = doc["metadata"]["labels"]["app.kubernetes.io/component"]
        [container] = [c for c in doc["spec"]["template"]["spec"]["containers"] if c["name"] == component]
        [var] = [v for v in container["env"] if v["name"] == "TASKYARD_BUS_KEYS"]
        refs[component] = var["valueFrom"]["secretKeyRef"]
    return refs


def test_by_default_every_service_reads_the_shared_keys() -> None:
    refs = _bus_keys_refs(helm.render())
    assert refs == {c: {"name": "taskyard-bus-keys", "key": "TASKYARD_BUS_KEYS"} for c in COMPONENTS}


def test_each_service_reads_its_own_keyring_when_named() -> None:
    sets = [f"bus.roleSecrets.{VALUES_KEY[c]}=keys-of-{c}" for c in COMPONENTS]
    refs = _bus_keys_refs(helm.render("--set", ",".join([*sets, "bus.roleSecretKey=RING"])))
    assert refs == {c: {"name": f"keys-of-{c}", "key": "RING"} for c in COMPONENTS}


def test_a_service_without_its_own_keeps_the_shared_keys() -> None:
    refs = _bus_keys_refs(helm.render("--set", "bus.roleSecrets.workerPool=pool-keys"))
    assert refs["worker-pool"] == {"name": "pool-keys", "key": "TASKYARD_BUS_KEYS"}
    assert refs["gateway"] == {"name": "taskyard-bus-keys", "key": "TASKYARD_BUS_KEYS"}


def test_the_production_example_gives_each_service_its_own_secret() -> None:
    refs = _bus_keys_refs(helm.render("-f", str(helm.EXAMPLES / "values-production.yaml")))
    assert refs == {c: {"name": f"taskyard-bus-keys-{c}", "key": "TASKYARD_BUS_KEYS"} for c in COMPONENTS}


@pytest.mark.parametrize("value", ["bus.roleSecrets.pool=x", "bus.roleSecretKey="])
def test_a_role_secret_the_chart_does_not_know_is_refused(value: str) -> None:
    assert "values don't meet the specifications of the schema" in helm.refusal("--set", value)


def test_a_keyring_in_place_of_a_secrets_name_is_refused() -> None:
    """roleSecrets name Secrets: key material pasted there would travel in the
    manifests in clear (and name no Secret)."""
    keyring = seal.generate_role_keys("x").split(",")[0]
    assert "values don't meet the specifications of the schema" in helm.refusal(
        "--set", f"bus.roleSecrets.gateway={keyring}"
    )


def test_the_documented_install_reads_the_secrets_the_documented_keys_make(tmp_path: Path) -> None:
    """docs/kubernetes.md, as written: `taskyard keys new bus-keys`, a Secret per service
    from its file, and the install with values-bus-roles.yaml reading them."""
    doc = (helm.ROOT / "docs/kubernetes.md").read_text()
    command = "taskyard keys new bus-keys"
    assert f"\n{command}    # one keyring per service" in doc
    assert "--from-file=TASKYARD_BUS_KEYS=bus-keys/$service.keys" in doc
    assert "-f deploy/helm/examples/values-bus-roles.yaml" in doc
    done = subprocess.run(
        [str(Path(sys.executable).with_name("taskyard")), *command.split()[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    refs = _bus_keys_refs(helm.render("-f", str(helm.EXAMPLES / "values-bus-roles.yaml")))
    for component in COMPONENTS:
        assert refs[component] == {"name": f"taskyard-bus-keys-{component}", "key": "TASKYARD_BUS_KEYS"}
        ring = seal.Keyring.parse((tmp_path / "bus-keys" / f"{component}.keys").read_text())
        assert ring.signer == f"k1-{component}" and ring.role_of(ring.signer) == component
