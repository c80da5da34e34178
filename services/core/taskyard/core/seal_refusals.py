"""The one line a process logs when the bus refuses messages over keys.

Which side is at fault depends on who speaks first. A pool dials the suite: sealed
messages it cannot verify, before it verified any, mean the suite holds another key,
and the suite refuses the pool's messages too. A service the pools dial (scheduler,
result store, gateway) that meets a peer with another key first (a restarted
scheduler meeting a pool started without the suite's key) knows only that it refuses
that peer: it names the key ids, and blames no one.
"""

from __future__ import annotations

from collections.abc import Sequence

# Processes that dial the suite, so that what they refuse is the suite's own traffic.
DIALS_THE_SUITE = frozenset({"pool"})
# Refusals that say the sender seals differently from this process ("sealed": a sealed
# message reached a process without a key; "unsigned": a plain one reached one with a key).
KEY_MISMATCH = frozenset({"unknown_key", "bad_mac", "sealed", "unsigned"})
KEYS_HINT = (
    "set TASKYARD_BUS_KEYS or TASKYARD_BUS_KEYS_FILE to the suite's key, or start it from the "
    "directory where `taskyard dev` runs (its key is in .taskyard/bus.keys)"
)
PEERS_HINT = (
    "every process of a suite needs the suite's bus keys, its own role's with keys per role "
    "(TASKYARD_BUS_KEYS or TASKYARD_BUS_KEYS_FILE; docs/security.md)"
)


def line(*, owner: str, reason: str, peer_kid: str, held: Sequence[str]) -> str:
    """What ``owner`` logs about the first message refused for ``reason`` (one of
    ``KEY_MISMATCH``), signed with ``peer_kid`` ("" when none is readable), while it
    holds the key ids ``held``."""
    ids = ", ".join(repr(kid) for kid in held) or "no key"
    if owner in DIALS_THE_SUITE:
        return _suite_refuses(f"this {owner}", reason, peer_kid, ids)
    who = f"this {owner}"
    if reason == "sealed":
        what = f"refusing messages signed with key id {peer_kid!r}; {who} has no bus key"
    elif reason == "bad_mac":
        what = f"refusing messages signed with key id {peer_kid!r} under another secret; {who} holds {ids}"
    elif reason == "unsigned":
        what = f"refusing unsigned messages (a peer without a bus key?); {who} holds {ids}"
    else:
        what = f"refusing messages signed with key id {peer_kid!r}; {who} holds {ids}"
    return f"{what}; {PEERS_HINT}"


def _suite_refuses(who: str, reason: str, peer_kid: str, ids: str) -> str:
    if reason == "sealed":
        why = f"the suite seals its internal bus (key id {peer_kid!r}) and {who} has no bus key"
    elif reason == "bad_mac":
        why = f"{who}'s bus key differs from the suite's (same key id {peer_kid!r}, another secret)"
    elif reason == "unsigned":
        # An unsealed suite refuses sealed messages as this pool refuses its plain ones.
        return (
            f"the suite refuses {who}'s messages: the suite's arrive unsigned (it runs without a bus "
            f"key) while {who} seals with {ids}; give every process the same key, or none (loopback only)"
        )
    else:
        why = (
            f"{who}'s bus key differs from the suite's (the suite signs with key id {peer_kid!r}, "
            f"{who} holds {ids})"
        )
    return f"the suite refuses {who}'s messages: {why}; {KEYS_HINT}"
