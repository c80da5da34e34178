"""TASKYARD_STORE_HOSTS and TASKYARD_SCHEDULER_HOSTS: every instance of a role, dialed
on one socket. The singular TASKYARD_STORE_HOST / TASKYARD_SCHEDULER_HOST is the
one-element form; the list wins when both are set; each entry is checked like a host."""

from __future__ import annotations

import socket

import pytest

from taskyard.core.config import Settings
from taskyard.core.priority import LANES, Priority

STORES = "TASKYARD_STORE_HOSTS"
SCHEDULERS = "TASKYARD_SCHEDULER_HOSTS"


def scheduler_dials(s: Settings) -> list[tuple[str, ...]]:
    return [
        *(s.lane_addresses(p) for p in LANES),
        s.registration_addresses,
        s.survey_addresses,
        s.discovery_addresses,
    ]


def store_dials(s: Settings) -> list[tuple[str, ...]]:
    return [s.store_addresses, s.events_addresses, s.pool_stream_addresses, s.scheduler_stream_addresses]


def test_a_list_gives_one_dial_address_per_host_in_its_order() -> None:
    s = Settings.from_env({STORES: "10.0.0.2, store-b,[fd00::3]", SCHEDULERS: "sched-a,sched-b"})
    assert s.store_addresses == ("tcp://10.0.0.2:5559", "tcp://store-b:5559", "tcp://[fd00::3]:5559")
    assert s.events_addresses == ("tcp://10.0.0.2:5562", "tcp://store-b:5562", "tcp://[fd00::3]:5562")
    assert s.pool_stream_addresses[1] == "tcp://store-b:5563"
    assert s.scheduler_stream_addresses[2] == "tcp://[fd00::3]:5564"
    assert s.lane_addresses(Priority.HIGH) == ("tcp://sched-a:5556", "tcp://sched-b:5556")
    assert s.registration_addresses == ("tcp://sched-a:5560", "tcp://sched-b:5560")
    assert s.survey_addresses == ("tcp://sched-a:5561", "tcp://sched-b:5561")
    assert s.discovery_addresses == ("tcp://sched-a:5550", "tcp://sched-b:5550")
    # The single-address forms are the first of each list.
    assert s.store_address == "tcp://10.0.0.2:5559"
    assert s.lane_address(Priority.LOW) == "tcp://sched-a:5558"
    assert (s.effective_store_host, s.effective_scheduler_host) == ("10.0.0.2", "sched-a")
    # Listeners are this instance's own, whatever the lists say.
    assert s.store_listen_address == "tcp://127.0.0.1:5559"
    assert s.survey_listen_address == "tcp://127.0.0.1:5561"


def test_the_singular_is_the_one_element_form() -> None:
    singular = Settings.from_env({"TASKYARD_STORE_HOST": "store-a", "TASKYARD_SCHEDULER_HOST": "sched-a"})
    listed = Settings.from_env({STORES: "store-a", SCHEDULERS: "sched-a"})
    assert store_dials(singular) == store_dials(listed)
    assert scheduler_dials(singular) == scheduler_dials(listed)
    assert all(len(addresses) == 1 for addresses in [*store_dials(singular), *scheduler_dials(singular)])
    assert singular.store_addresses == ("tcp://store-a:5559",)


def test_the_list_wins_over_the_singular() -> None:
    s = Settings.from_env(
        {"TASKYARD_STORE_HOST": "old", STORES: "a,b", "TASKYARD_SCHEDULER_HOST": "old", SCHEDULERS: "c"}
    )
    assert s.store_addresses == ("tcp://a:5559", "tcp://b:5559")
    assert s.survey_addresses == ("tcp://c:5561",)
    assert "old" not in str([*store_dials(s), *scheduler_dials(s)])


@pytest.mark.parametrize("value", ["", " ", " , ,"])
def test_an_empty_list_falls_back_to_the_singular_then_the_host(value: str) -> None:
    s = Settings.from_env({STORES: value, SCHEDULERS: value, "TASKYARD_STORE_HOST": "store-a"})
    assert s.store_addresses == ("tcp://store-a:5559",)
    assert s.registration_addresses == ("tcp://127.0.0.1:5560",)
    assert Settings.from_env({STORES: value, "TASKYARD_HOST": "10.1.1.1"}).events_addresses == (
        "tcp://10.1.1.1:5562",
    )


@pytest.mark.parametrize(
    ("variable", "value", "entry", "problem"),
    [
        (STORES, "10.0.0.2,tcp://10.0.0.3", "tcp://10.0.0.3", "is not a host"),
        (STORES, "store-a,store-b:5559", "store-b:5559", "is not a host"),
        (SCHEDULERS, "sched-a,sched a", "sched a", "is not a host"),
        (SCHEDULERS, "sched-a,/run/x", "/run/x", "is not a host"),
        (STORES, "store-a,store-b,Store-A", "Store-A", "is listed twice"),
    ],
)
def test_a_bad_entry_is_refused_naming_the_variable_and_the_entry(
    variable: str, value: str, entry: str, problem: str
) -> None:
    with pytest.raises(ValueError) as info:
        Settings.from_env({variable: value})
    message = str(info.value)
    assert message.startswith(f"{variable} must be a comma-separated list of host names or IP addresses")
    assert f"{entry!r} {problem}" in message
    assert f"got {value!r}" in message


def test_ipc_has_one_socket_file_per_role_whatever_the_lists() -> None:
    s = Settings.from_env(
        {"TASKYARD_TRANSPORT": "ipc", "TASKYARD_IPC_DIR": "/tmp/ty-x", STORES: "a,b", SCHEDULERS: "c,d"}
    )
    assert s.store_addresses == ("ipc:///tmp/ty-x/store.sock",)
    assert s.lane_addresses(Priority.NORMAL) == ("ipc:///tmp/ty-x/lane-normal.sock",)
    assert s.store_address == s.store_listen_address
    assert s.advertised_survey_address == s.survey_listen_address


def test_the_lists_reach_a_child_process_and_settings_copies() -> None:
    s = Settings.from_env({STORES: "a, b", SCHEDULERS: "c,d"})
    assert s.to_env()[STORES] == "a,b"
    assert Settings.from_env(s.to_env()) == s
    assert s.replace(store_hosts="x,y").store_hosts == ("x", "y")
    with pytest.raises(ValueError, match="is not a host"):
        s.replace(scheduler_hosts=("c", "tcp://d"))


def test_a_scheduler_hands_pools_its_own_survey_address() -> None:
    # One scheduler host: pools reach this scheduler under that name (as before).
    one = Settings.from_env({"TASKYARD_SCHEDULER_HOST": "scheduler", "TASKYARD_BIND_HOST": "0.0.0.0"})
    assert one.advertised_survey_address == "tcp://scheduler:5561"
    # Several: the first may be another scheduler, so its own advertised host.
    several = {SCHEDULERS: "10.0.0.2,10.0.0.3"}
    assert (
        Settings.from_env({**several, "TASKYARD_BIND_HOST": "10.0.0.3"}).advertised_survey_address
        == "tcp://10.0.0.3:5561"
    )
    assert (
        Settings.from_env({**several, "TASKYARD_BIND_HOST": "0.0.0.0"}).advertised_survey_address
        == f"tcp://{socket.gethostname()}:5561"
    )
    # TASKYARD_ADVERTISE_HOST wins in both cases.
    for env in (several, {"TASKYARD_SCHEDULER_HOST": "scheduler"}):
        s = Settings.from_env({**env, "TASKYARD_ADVERTISE_HOST": "sched-1.internal"})
        assert s.advertised_survey_address == "tcp://sched-1.internal:5561"
