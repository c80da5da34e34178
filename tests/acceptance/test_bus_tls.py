"""A whole suite over the encrypted bus (docs/security.md, "TLS on the bus"): the
certificates made by the documented OpenSSL commands and the variables set by the
documented exports, exactly as written; the Python client's conformance scenarios pass
against it; and its ports shake hands only with a certificate of the suite's CA."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pynng
import pytest
from support import certs, ports
from support.conformance import (
    READY_TIMEOUT,
    RUN_TIMEOUT,
    RUNNERS,
    Outcome,
    Suite,
    run_program,
    running_suite,
)

from taskyard.core import addresses

# One process runs the module: its certificates and encrypted suite are made once.
pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.timeout(READY_TIMEOUT + RUN_TIMEOUT + 60),
    pytest.mark.xdist_group("bus-tls"),
]

ROOT = Path(__file__).resolve().parents[2]


def _documented_blocks() -> list[str]:
    text = (ROOT / "docs/security.md").read_text()
    section = text[text.index("### TLS on the bus") :].split("\n### ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.DOTALL)


def _documented_environment(block: str, cwd: Path) -> dict[str, str]:
    """The TASKYARD_* variables the documented exports set, as bash sets them."""
    shown = subprocess.run(
        ["bash", "-c", f"{block}\nenv -0"], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
    ).stdout
    pairs = (item.split("=", 1) for item in shown.split("\0") if item.startswith("TASKYARD_"))
    return {k: v for k, v in pairs if k.startswith(("TASKYARD_TRANSPORT", "TASKYARD_BUS_TLS_"))}


class Encrypted:
    def __init__(self, suite: Suite, work: Path, base_port: int) -> None:
        self.suite = suite
        self.work = work
        self.store_port = base_port + addresses.RESULT_QUERY_OFFSET

    def dial(self, **options: object) -> None:
        """A blocking dial of the store's query port: returns once the handshake is done."""
        with pynng.Req0(**options) as sock:
            scheme = "tls+tcp" if "tls_config" in options else "tcp"
            sock.dial(f"{scheme}://127.0.0.1:{self.store_port}", block=True)


@pytest.fixture(scope="module")
def encrypted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Encrypted]:
    work = tmp_path_factory.mktemp("bus-tls")
    make_certificates, exports = _documented_blocks()
    subprocess.run(["bash", "-c", make_certificates], cwd=work, capture_output=True, check=True, timeout=60)
    env = _documented_environment(exports, work)
    assert env["TASKYARD_TRANSPORT"] == "tls+tcp", env
    base_port = ports.free_port_block(10)
    env.update(
        TASKYARD_BASE_PORT=str(base_port),
        TASKYARD_DISCOVERY_PORT=str(ports.free_port()),
    )
    # The documented paths are relative: the suite runs where the commands made the files.
    with running_suite(work, env, cwd=work) as suite:
        yield Encrypted(suite, work, base_port)


def test_the_python_conformance_scenarios_pass_over_an_encrypted_bus(encrypted: Encrypted) -> None:
    Outcome.of(run_program(RUNNERS["python"], encrypted.suite.client_env())).check("python")


def test_the_bus_shakes_hands_only_with_a_certificate_of_its_ca(encrypted: Encrypted, tmp_path: Path) -> None:
    def tls(ca: Path, cert: Path, key: Path) -> pynng.TLSConfig:
        return pynng.TLSConfig(
            pynng.TLSConfig.MODE_CLIENT,
            ca_string=ca.read_text(),
            own_cert_string=cert.read_text(),
            own_key_string=key.read_text(),
            server_name="taskyard-bus",
            auth_mode=pynng.TLSConfig.AUTH_MODE_REQUIRED,
        )

    made = encrypted.work / "bus-tls"
    encrypted.dial(tls_config=tls(made / "ca.pem", made / "node.pem", made / "node.key"))
    # Plain tcp: no SP handshake with a TLS listener.
    with pytest.raises(pynng.NNGException):
        encrypted.dial()
    # A certificate another CA signed (trusting the suite's CA itself): the listener refuses it.
    other = certs.make(tmp_path / "other")
    with pytest.raises(pynng.NNGException):
        encrypted.dial(tls_config=tls(made / "ca.pem", other.client_cert, other.client_key))
    # The suite's own CA, but a dialer that expects another name: it refuses the listener.
    with pytest.raises(pynng.NNGException):
        encrypted.dial(
            tls_config=pynng.TLSConfig(
                pynng.TLSConfig.MODE_CLIENT,
                ca_string=(made / "ca.pem").read_text(),
                own_cert_string=(made / "node.pem").read_text(),
                own_key_string=(made / "node.key").read_text(),
                server_name="not-the-bus",
                auth_mode=pynng.TLSConfig.AUTH_MODE_REQUIRED,
            )
        )
