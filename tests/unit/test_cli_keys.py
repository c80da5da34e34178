"""``taskyard keys new``: one keyring per service, each its own role's key first and
only the keys it verifies, written owner-only, never over existing keys."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskyard.cli.main import cli
from taskyard.core import contract, roles, seal


def test_each_service_gets_its_own_keyring(tmp_path: Path) -> None:
    out = tmp_path / "bus-keys"
    done = CliRunner().invoke(cli, ["keys", "new", str(out), "--prefix", "k2"])
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    rings = {}
    for role in roles.ROLES:
        path = out / f"{role}.keys"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        rings[role] = ring = seal.Keyring.parse(path.read_text())
        assert ring.signer == f"k2-{role}" and ring.role_of(ring.signer) == role
        assert {r for _, r in ring.roles} == {role, *contract.KEYS_HELD[role]}
        assert f"{path}  ({role}: signs with k2-{role})" in done.output
    assert roles.GATEWAY not in {r for _, r in rings[roles.WORKER_POOL].roles}
    # One key per role, the same secret in every keyring that holds it.
    secrets = {kid: key for ring in rings.values() for kid, key in ring.keys}
    assert len(secrets) == len(roles.ROLES)
    for ring in rings.values():
        assert all(secrets[kid] == key for kid, key in ring.keys)
    assert not any(key.hex() in done.output for key in secrets.values())


def test_existing_keys_are_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "gateway.keys").write_text("mine")
    done = CliRunner().invoke(cli, ["keys", "new", str(tmp_path)])
    assert done.exit_code != 0 and "is not empty: keys new never overwrites keys" in done.output
    assert (tmp_path / "gateway.keys").read_text() == "mine"


@pytest.mark.parametrize("prefix", ["", "a/b", "x" * 40, "a,b"])
def test_a_prefix_that_cannot_make_key_ids_is_refused(tmp_path: Path, prefix: str) -> None:
    done = CliRunner().invoke(cli, ["keys", "new", str(tmp_path / "k"), "--prefix", prefix])
    assert done.exit_code != 0 and "--prefix" in done.output
    assert not (tmp_path / "k").exists()
