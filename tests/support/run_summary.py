"""Lines a test leaves for the end of the run's output.

A conformance test records its pass count ("<language> worker conformance: N/N
passed") as a property of its report; the run's summary prints them all. Under
xdist a test's own output never reaches the run's log, its report's properties do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CONFORMANCE_PROPERTY = "conformance"
# pytest's record_property fixture.
RecordProperty = Callable[[str, object], None]


def conformance_section(terminalreporter: Any) -> None:
    lines = [
        str(value)
        for outcome in ("passed", "failed")
        for report in terminalreporter.stats.get(outcome, [])
        if getattr(report, "when", "") == "call"
        for name, value in getattr(report, "user_properties", [])
        if name == CONFORMANCE_PROPERTY
    ]
    if lines:
        terminalreporter.section("conformance")
        for line in sorted(lines):
            terminalreporter.write_line(line)
