"""The @task registry and the example tasks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskyard.worker_pool import is_worker_process, registry, task


def test_bare_decorator_registers_under_the_function_name() -> None:
    @task
    def unit_plain(a: int) -> int:
        return a * 2

    try:
        tdef = registry.get("unit_plain")
        assert tdef is not None and tdef.fn is unit_plain and not tdef.is_async
        assert tdef.timeout is None and tdef.max_retries is None
        assert unit_plain(2) == 4  # still callable directly
    finally:
        registry.unregister("unit_plain")


def test_decorator_with_options_and_async() -> None:
    @task(name="unit.custom", timeout=1.5, max_retries=7)
    async def whatever() -> str:
        return "x"

    try:
        tdef = registry.get("unit.custom")
        assert tdef is not None and tdef.is_async and tdef.timeout == 1.5 and tdef.max_retries == 7
        assert "unit.custom" in registry.names()
        assert asyncio.run(whatever()) == "x"
    finally:
        registry.unregister("unit.custom")


def test_a_name_taken_by_another_function_is_refused() -> None:
    @task(name="unit.dupe")
    def first() -> None: ...

    try:
        with pytest.raises(ValueError, match="already registered"):

            @task(name="unit.dupe")
            def second() -> None: ...

        task(name="unit.dupe")(first)  # the same function again is fine (re-import)
    finally:
        registry.unregister("unit.dupe")


def test_bad_options() -> None:
    with pytest.raises(ValueError):
        task(timeout=0)
    with pytest.raises(ValueError):
        task(max_retries=-1)
    with pytest.raises(TypeError, match="timout"):
        task(timout=5)  # type: ignore[call-overload]


def test_load_modules_and_examples(tmp_path: Path) -> None:
    names = registry.load_modules(["taskyard.examples"])
    assert {"add", "async_add", "noop", "echo", "sleep", "busy", "fail", "crash", "flaky"} <= set(names)
    import taskyard.examples as ex

    assert ex.add(2, 3) == 5
    assert asyncio.run(ex.async_add(2, 3)) == 5
    assert ex.echo(1, k="v") == {"args": [1], "kwargs": {"k": "v"}}
    assert ex.noop() is None
    with pytest.raises(ValueError, match="boom"):
        ex.fail("boom")
    for _ in range(2):
        with pytest.raises(RuntimeError):
            ex.flaky("k", 2, state_dir=str(tmp_path))
    assert ex.flaky("k", 2, state_dir=str(tmp_path)) == 3
    assert ex.flaky("other", 0, state_dir=str(tmp_path)) == 1


def test_load_modules_propagates_import_errors() -> None:
    with pytest.raises(ModuleNotFoundError):
        registry.load_modules(["taskyard.no_such_module"])


def test_not_a_worker_process_here() -> None:
    assert is_worker_process() is False
