"""The dev project's bus key: written by ``taskyard dev`` (0600), found by ``taskyard
serve`` and ``taskyard queue start`` run from the same directory, never over a key
configured explicitly; and the command dev prints to start another pool."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from taskyard.cli import bus_key, procs
from taskyard.cli.dev import key_origin, pool_command
from taskyard.core import seal
from taskyard.core.config import Settings

OTHER = seal.generate_keys("ops")
# The keys dev writes: one per role.
DEV_ROLES = {f"dev-{role}": role for role in ("gateway", "scheduler", "result-store", "worker-pool")}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_dev_writes_its_key_owner_only_and_keeps_it(tmp_path: Path) -> None:
    first = bus_key.dev_key(tmp_path / ".taskyard")
    assert first.created and first.path == (tmp_path / ".taskyard" / "bus.keys").resolve()
    assert mode(first.path) == 0o600
    assert dict(seal.Keyring.parse(first.path.read_text()).roles) == DEV_ROLES
    again = bus_key.dev_key(tmp_path / ".taskyard")
    assert not again.created and again.keys == first.keys


def test_dev_replaces_a_broken_key_file(tmp_path: Path) -> None:
    path = bus_key.dev_key(tmp_path).path
    path.write_text("not a key\n")
    fresh = bus_key.dev_key(tmp_path)
    assert fresh.created and dict(seal.Keyring.parse(fresh.keys).roles) == DEV_ROLES
    assert mode(path) == 0o600


def test_dev_replaces_a_key_file_without_roles(tmp_path: Path) -> None:
    """An earlier dev's one shared key: one key per role in its place, saying why."""
    path = bus_key.dev_key(tmp_path).path
    path.write_text(f"# an earlier dev's\n{seal.generate_keys('dev')}\n")
    fresh = bus_key.dev_key(tmp_path)
    assert fresh.created and dict(seal.Keyring.parse(fresh.keys).roles) == DEV_ROLES
    assert fresh.distrusted == "binds its keys to no role (an earlier taskyard dev's)"
    assert key_origin(fresh).endswith(
        "in place of a file that binds its keys to no role (an earlier taskyard dev's), not used"
    )


def test_each_dev_service_gets_its_key_first_and_only_the_keys_it_verifies(tmp_path: Path) -> None:
    keys = bus_key.dev_key(tmp_path).keys
    held = {service: seal.Keyring.parse(bus_key.service_keys(keys, service)) for service in procs.START_ORDER}
    assert {service: ring.signer for service, ring in held.items()} == {
        "result-store": "dev-result-store",
        "scheduler": "dev-scheduler",
        "worker-pool": "dev-worker-pool",
        "gateway": "dev-gateway",
    }
    assert {service: sorted(role for _, role in ring.roles) for service, ring in held.items()} == {
        "result-store": ["gateway", "result-store", "scheduler", "worker-pool"],
        "scheduler": ["gateway", "result-store", "scheduler", "worker-pool"],
        "worker-pool": ["worker-pool"],
        "gateway": ["gateway", "result-store", "worker-pool"],
    }
    # Each is a TASKYARD_BUS_KEYS value the service reads as such.
    ring = Settings.from_env({"TASKYARD_BUS_KEYS": bus_key.service_keys(keys, "worker-pool")})
    assert seal.for_settings(ring, role="worker-pool").keyring.signer == "dev-worker-pool"
    # Keys given to dev (no roles): every service gets them as they are.
    assert bus_key.service_keys(OTHER, "gateway") == OTHER


def _replaced(tmp_path: Path, old: bus_key.DevKey, because: str) -> None:
    """A new key, in a new 0600 regular file of this user's, saying why the old one went."""
    fresh = bus_key.dev_key(tmp_path)
    assert fresh.created and fresh.keys != old.keys, fresh
    assert because in fresh.distrusted, fresh.distrusted
    info = fresh.path.lstat()
    assert stat.S_ISREG(info.st_mode) and mode(fresh.path) == 0o600 and info.st_uid == os.getuid()
    assert dict(seal.Keyring.parse(fresh.path.read_text()).roles) == DEV_ROLES
    # Trusted from then on.
    again = bus_key.dev_key(tmp_path)
    assert not again.created and again.keys == fresh.keys and not again.distrusted
    assert not list(tmp_path.glob(".bus.keys.*"))  # no temporary file left


@pytest.mark.parametrize("loose", [0o644, 0o640, 0o604, 0o660, 0o700])
def test_a_key_file_others_could_read_or_write_is_not_used(tmp_path: Path, loose: int) -> None:
    old = bus_key.dev_key(tmp_path)
    old.path.chmod(loose)
    _replaced(tmp_path, old, f"has mode {loose:04o}, wider than 0600")


def test_a_narrower_key_file_is_used(tmp_path: Path) -> None:
    old = bus_key.dev_key(tmp_path)
    old.path.chmod(0o400)
    again = bus_key.dev_key(tmp_path)
    assert not again.created and again.keys == old.keys and not again.distrusted


def test_a_key_file_of_another_user_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = bus_key.dev_key(tmp_path)
    if os.geteuid() == 0:
        os.chown(old.path, 4242, -1)
    else:  # only root gives a file away: this user is someone else instead
        me = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: me + 1)
    _replaced(tmp_path, old, "belongs to uid")


def test_a_symbolic_link_in_place_of_the_key_file_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    planted = bus_key.dev_key(elsewhere)  # a valid key file, 0600, somewhere else
    project = tmp_path / "project"
    project.mkdir()
    (project / "bus.keys").symlink_to(planted.path)
    fresh = bus_key.dev_key(project)
    assert fresh.created and fresh.keys != planted.keys and fresh.distrusted == "is a symbolic link"
    assert not (project / "bus.keys").is_symlink()
    assert key_origin(fresh) == (
        f"written to {fresh.path} (0600) in place of a file that is a symbolic link, not used"
    )
    # The link was replaced, its target left as it was.
    assert seal.Keyring.parse(planted.path.read_text()).spec() == planted.keys


def test_a_command_in_the_project_directory_takes_devs_key(tmp_path: Path) -> None:
    key = bus_key.dev_key(tmp_path / ".taskyard")
    choice = bus_key.project_env({"PATH": "/bin"}, cwd=tmp_path)
    assert choice.env == {"PATH": "/bin", "TASKYARD_BUS_KEYS_FILE": str(key.path)}
    assert str(key.path) in choice.line and "taskyard dev" in choice.line
    # ... and the services read it as their keyring.
    assert Settings.from_env(choice.env).bus_keys_file == str(key.path)


def test_a_pool_started_in_the_project_directory_holds_its_own_key_alone(tmp_path: Path) -> None:
    """taskyard queue start / serve worker-pool beside taskyard dev: the pool's own
    keyring, as dev hands it out, not every role's keys in the project's file."""
    key = bus_key.dev_key(tmp_path / ".taskyard")
    choice = bus_key.project_env({"PATH": "/bin"}, cwd=tmp_path, service="worker-pool")
    assert "TASKYARD_BUS_KEYS_FILE" not in choice.env
    held = seal.Keyring.parse(choice.env["TASKYARD_BUS_KEYS"])
    assert set(dict(held.roles).values()) == {"worker-pool"}
    assert choice.env["TASKYARD_BUS_KEYS"] == bus_key.service_keys(key.keys, "worker-pool")
    assert str(key.path) in choice.line and "worker-pool's own keyring" in choice.line


@pytest.mark.parametrize(
    ("env", "source"),
    [
        ({"TASKYARD_BUS_KEYS": OTHER}, "TASKYARD_BUS_KEYS"),
        (
            {"TASKYARD_BUS_KEYS_FILE": "/etc/taskyard/bus.keys"},
            "TASKYARD_BUS_KEYS_FILE (/etc/taskyard/bus.keys)",
        ),
    ],
)
def test_a_key_set_explicitly_wins(tmp_path: Path, env: dict[str, str], source: str) -> None:
    bus_key.dev_key(tmp_path / ".taskyard")
    choice = bus_key.project_env(env, cwd=tmp_path)
    assert choice.env == env
    assert choice.line == f"bus key from {source}"
    assert OTHER not in choice.line  # never the secret


def test_a_key_from_the_secrets_directory_wins(tmp_path: Path) -> None:
    bus_key.dev_key(tmp_path / ".taskyard")
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "TASKYARD_BUS_KEYS").write_text(OTHER)
    env = {"TASKYARD_SECRETS_DIR": str(secrets)}
    choice = bus_key.project_env(env, cwd=tmp_path)
    assert choice.env == env and "secrets directory" in choice.line


def test_elsewhere_no_key_is_said_plainly(tmp_path: Path) -> None:
    choice = bus_key.project_env({}, cwd=tmp_path)
    assert choice.env == {}
    assert choice.line.startswith("no bus key") and "unsealed" in choice.line


def test_the_printed_pool_command(tmp_path: Path) -> None:
    key = bus_key.dev_key(tmp_path / ".taskyard")
    default = Settings()
    # From the project directory with the default addresses: nothing to add.
    assert pool_command(default, key, tmp_path) == "PYTHONPATH=. taskyard serve worker-pool --tasks MODULE"
    # Another data dir, another transport: the command carries them.
    ipc = default.replace(transport="ipc", ipc_dir="/tmp/ty dev")
    command = pool_command(ipc, key, tmp_path / "elsewhere")
    assert command == (
        "PYTHONPATH=. TASKYARD_TRANSPORT=ipc TASKYARD_IPC_DIR='/tmp/ty dev' "
        f"TASKYARD_BUS_KEYS_FILE={key.path} taskyard serve worker-pool --tasks MODULE"
    )
    # A key the user configured: the command says to bring it, without showing it.
    mine = pool_command(default.replace(bus_keys=OTHER), None, tmp_path)
    assert "TASKYARD_BUS_KEYS" in mine and OTHER.split(":")[1] not in mine
