"""bench/chaos's flood verdict: what fails the run (the store's memory, a read
unanswered or in error) and what is a figure only (how much slower reads got while
the flooder shared the machine's cores)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import chaos_flood

MIB = 1 << 20


def figures(**changed: Any) -> chaos_flood.FloodFigures:
    values: dict[str, Any] = dict(
        size=32 * MIB, rss_before=57 * MIB, rss_peak=60 * MIB, p50_before=0.0025, p50_during=0.0026,
        reads_before=1000, reads_during=400, read_errors=0, store_cpu_before=1.0,
        store_cpu_during=1.0, flooder_cpu=3.0, sent=100, pipes_closed=300,
    )  # fmt: skip
    values.update(changed)
    return chaos_flood.FloodFigures(**values)


def test_reads_slower_under_a_flood_on_shared_cores_are_a_figure_not_a_failure() -> None:
    slower = figures(p50_during=0.0052)
    assert slower.passed and not slower.reads_kept_pace
    assert "over 2x, a figure" in "\n".join(slower.lines())
    assert figures().reads_kept_pace and "within 2x" in "\n".join(figures().lines())


def test_memory_past_its_bound_a_read_in_error_or_none_answered_fail_the_run() -> None:
    assert not figures(size=10 * MIB, rss_peak=58 * MIB + chaos_flood.RSS_BOUND).passed
    # Near the socket's limit, the bodies NNG may hold on the flooders' connections and the
    # one being hashed: five of them (+148 MiB of 32.9 MiB junk was seen in CI).
    assert figures(rss_peak=(57 + 148) * MIB).passed
    assert not figures(size=10 * MIB, rss_peak=(57 + 148) * MIB).passed
    assert not figures(read_errors=1).passed
    assert not figures(reads_during=0).passed
