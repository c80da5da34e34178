"""The suite waits on signals and on an injected clock, never on wall time.

A test that sleeps and hopes, bounds how long something took, or polls until a
deadline is flaky on a busy machine and slow on an idle one. This checker reads
every test module's syntax tree and finds three shapes of wall-time waiting:

- ``wall-clock-assert``: an ``assert`` ordering an elapsed/took/duration figure, or
  ``time.monotonic()``/``time.time()``/``perf_counter()`` arithmetic, against a bound;
  or a figure worked out from a clock read in the same function (``handover =
  time.monotonic() - stopped_at``, a list of measured spans and its p99), or a
  verdict drawn from one (``late = [x for x in lateness if x > LIMIT]``).
  A figure that matters belongs in bench/, not in a test.
- ``fixed-sleep``: ``time.sleep``/``asyncio.sleep``/``sleep`` with a non-zero literal
  (or a module constant bound to one), outside a task body, where simulated work
  legitimately takes time. ``sleep(0)`` is a yield, not a wait.
- ``deadline-loop``: a ``while`` whose test compares the clock or a ``deadline``:
  a hand-rolled poll (tests/support/waiting.py is the one shared poll).

None is left, the harness in tests/support included (it polls through
``support.waiting``, the one shared poll): ``ALLOWED`` counts exceptions per (path,
kind), and is empty. A new offence fails, and so does a count above what is found.
Run this module as a script to print every offence as ``path:line: kind``.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve()
# The one shared poll (a timeout, and a message naming what was awaited): what the rest call.
SHARED_POLL = TESTS / "support" / "waiting.py"

WALL_CLOCK_ASSERT = "wall-clock-assert"
FIXED_SLEEP = "fixed-sleep"
DEADLINE_LOOP = "deadline-loop"

# Words that name a measured span of wall time.
_SPAN_WORDS = ("elapsed", "took", "duration")
# Clock reads: module.function, or a bare imported function.
_CLOCK_CALLS = {
    ("time", "monotonic"),
    ("time", "time"),
    ("time", "perf_counter"),
    ("time", "monotonic_ns"),
    ("time", "time_ns"),
    ("time", "perf_counter_ns"),
}
_BARE_CLOCKS = {"monotonic", "perf_counter", "monotonic_ns", "perf_counter_ns"}
_SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True)
class Offence:
    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}"


def _is_task_module(path: Path) -> bool:
    """Modules loaded into worker pools: every function there is a task body or its helper."""
    return path.parent.name == "support" and "tasks" in path.stem


def _dotted(node: ast.expr) -> tuple[str, ...]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    return ()


def _is_clock_read(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = _dotted(node.func)
    if name[-2:] in _CLOCK_CALLS or name in {(bare,) for bare in _BARE_CLOCKS}:
        return True
    # An event loop's clock: loop.time(), self.loop.time(), asyncio.get_running_loop().time().
    if isinstance(node.func, ast.Attribute) and node.func.attr == "time":
        receiver = node.func.value
        if isinstance(receiver, ast.Call):
            return _dotted(receiver.func)[-1:] in {
                ("get_running_loop",),
                ("get_event_loop",),
            }
        return "loop" in (_dotted(receiver)[-1:] or ("",))[0]
    return False


def _reads_clock(node: ast.AST) -> bool:
    return any(_is_clock_read(sub) for sub in ast.walk(node))


def _names_span(node: ast.AST) -> bool:
    """A Name, Attribute or Call (or arithmetic over them) naming an elapsed span.

    Only a chain's last name counts: ``run.took`` does, ``durations.parse(x)`` (a module) does not.
    """
    receivers = {id(sub.value) for sub in ast.walk(node) if isinstance(sub, ast.Attribute)}
    for sub in ast.walk(node):
        word = None
        if isinstance(sub, ast.Name) and id(sub) not in receivers:
            word = sub.id
        elif isinstance(sub, ast.Attribute):
            word = sub.attr
        if word is not None and any(span in word.lower() for span in _SPAN_WORDS):
            return True
    return False


def _names_deadline(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        # Lower case only: DEADLINE_EXCEEDED is a status code, not a clock.
        if isinstance(sub, ast.Name) and "deadline" in sub.id:
            return True
        if isinstance(sub, ast.Attribute) and "deadline" in sub.attr:
            return True
    return False


def _compares(node: ast.AST) -> Iterator[ast.Compare]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare):
            yield sub


def _names_any(node: ast.AST, names: frozenset[str]) -> bool:
    return bool(names) and any(isinstance(sub, ast.Name) and sub.id in names for sub in ast.walk(node))


def _orders_wall_time(node: ast.AST, measured: frozenset[str]) -> bool:
    """Whether ``node`` holds an ordering whose side reads the clock or a measured name."""
    for compare in _compares(node):
        if any(isinstance(op, _ORDERINGS) for op in compare.ops):
            sides = [compare.left, *compare.comparators]
            if any(_names_any(side, measured) for side in sides):
                return True
    return False


def _is_wall_clock_bound(
    test: ast.expr,
    spans_are_wall_time: bool,
    measured: frozenset[str] = frozenset(),
    verdicts: frozenset[str] = frozenset(),
) -> bool:
    if _names_any(test, verdicts):
        return True
    for compare in _compares(test):
        if not any(isinstance(op, _ORDERINGS) for op in compare.ops):
            continue
        sides = [compare.left, *compare.comparators]
        if any(
            (spans_are_wall_time and _names_span(side)) or _reads_clock(side) or _names_any(side, measured)
            for side in sides
        ):
            return True
    return False


def _bindings(scope: ast.AST) -> Iterator[tuple[list[str], ast.expr]]:
    """(names, value) for each binding in ``scope``: assignments, and values put in a
    collection (``spans.append(x)`` makes ``spans`` hold ``x``)."""
    for node in ast.walk(scope):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets, value = [node.target], node.value
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets, value = [node.target], node.iter
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"append", "extend", "add", "insert"}
            and node.args
        ):
            targets, value = [node.func.value], node.args[-1]
        if value is None:
            continue
        names = [sub.id for t in targets for sub in ast.walk(t) if isinstance(sub, ast.Name)]
        if names:
            yield names, value


# Calls whose result carries their arguments' figures (a cast, an aggregate, a
# quantile); any other call's result is its own (a query made with a clock read in
# its arguments returns rows, not a span).
_CARRIERS = {
    "int",
    "float",
    "round",
    "abs",
    "sorted",
    "list",
    "tuple",
    "max",
    "min",
    "sum",
    "quantiles",
    "median",
    "mean",
    "fmean",
    "percentile",
}


def _data(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what its value is made of, not descending into the arguments of
    a call that is not a carrier."""
    yield node
    if isinstance(node, ast.Call) and _dotted(node.func)[-1:] not in {(c,) for c in _CARRIERS}:
        return
    for child in ast.iter_child_nodes(node):
        yield from _data(child)


def _made_of(value: ast.AST, names: set[str]) -> bool:
    return any(_is_clock_read(sub) or (isinstance(sub, ast.Name) and sub.id in names) for sub in _data(value))


def _measured(scope: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """The names in ``scope`` bound to a span of wall time (a difference with a clock
    read or an instant read earlier, then what is made of spans: a list of them, its
    p99), and the names bound to a verdict ordering such a span. An instant alone (a
    stamp taken before or after something, to bracket it) is no span."""
    bindings = list(_bindings(scope))
    instants: set[str] = set()
    spans: set[str] = set()
    grew = True
    while grew:
        grew = False
        for names, value in bindings:
            timed = instants | spans
            is_span = any(isinstance(n, ast.Name) and n.id in spans for n in _data(value)) or any(
                isinstance(sub, ast.BinOp)
                and isinstance(sub.op, ast.Sub)
                and (_made_of(sub.left, timed) or _made_of(sub.right, timed))
                for sub in _data(value)
            )
            if not is_span and not _made_of(value, timed):
                continue
            into = spans if is_span else instants
            for name in names:
                if name not in into:
                    into.add(name)
                    grew = True
    frozen = frozenset(spans)
    verdicts = {
        name
        for names, value in bindings
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp))
        and _orders_wall_time(value, frozen)
        for name in names
    }
    return frozen, frozenset(verdicts)


def _reads_wall_clock(tree: ast.Module) -> bool:
    """Whether a module can measure wall time at all: it imports ``time`` or reads a clock.

    A module that does neither measures its spans on an injected clock (a ManualClock
    advanced by the test), which is exactly what a test should do.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name == "time" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            return True
        if _is_clock_read(node):
            return True
    return False


def _is_deadline_test(test: ast.expr) -> bool:
    for compare in _compares(test):
        sides = [compare.left, *compare.comparators]
        if any(_reads_clock(side) or _names_deadline(side) for side in sides):
            return True
    return False


def _is_clock_against_deadline(test: ast.expr) -> bool:
    for compare in _compares(test):
        if not any(isinstance(op, _ORDERINGS) for op in compare.ops):
            continue
        sides = [compare.left, *compare.comparators]
        if any(_reads_clock(side) for side in sides) and any(_names_deadline(side) for side in sides):
            return True
    return False


def _leaves_at_a_deadline(loop: ast.While) -> bool:
    """``while True: ... if time.monotonic() > deadline: raise``: the same poll, spelled otherwise."""
    for stmt in loop.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.If) and _is_deadline_test(sub.test):
                leaves = (ast.Break, ast.Raise, ast.Return)
                if any(isinstance(n, leaves) for branch in sub.body for n in ast.walk(branch)):
                    return True
    return False


def _nonzero_number(node: ast.expr | None, constants: dict[str, float]) -> bool:
    if node is None:
        return False
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return node.value != 0
    if isinstance(node, ast.Name):
        return constants.get(node.id, 0) != 0
    return False


def _is_fixed_sleep(call: ast.Call, constants: dict[str, float]) -> bool:
    name = _dotted(call.func)
    if name[-2:] not in _SLEEPS and name != ("sleep",):
        return False
    delay = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg in {"delay", "seconds", "secs"}:
            delay = keyword.value
    return _nonzero_number(delay, constants)


def _module_constants(tree: ast.Module) -> dict[str, float]:
    """Module-level names bound once to a number: ``PAUSE = 0.5``."""
    constants: dict[str, float] = {}
    for stmt in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            targets, value = [stmt.target], stmt.value
        if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
            for target in targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = float(value.value)
    return constants


def _is_task_decorator(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return _dotted(target)[-1:] == ("task",)


class _Finder(ast.NodeVisitor):
    def __init__(
        self,
        path: str,
        constants: dict[str, float],
        task_module: bool,
        wall_clock: bool,
    ) -> None:
        self.path = path
        self.wall_clock = wall_clock
        self.constants = constants
        self.in_task = task_module
        self.found: list[Offence] = []
        # Names of the function being read bound to wall-time figures, and verdicts on them.
        self.measured: frozenset[str] = frozenset()
        self.verdicts: frozenset[str] = frozenset()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.in_task, self.measured, self.verdicts
        self.in_task = outer[0] or any(_is_task_decorator(d) for d in node.decorator_list)
        self.measured, self.verdicts = _measured(node)
        self.generic_visit(node)
        self.in_task, self.measured, self.verdicts = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Assert(self, node: ast.Assert) -> None:
        # ``assert time.monotonic() < deadline`` in a ``while True`` is the same hand-rolled poll.
        if _is_clock_against_deadline(node.test):
            self.found.append(Offence(self.path, node.lineno, DEADLINE_LOOP))
        elif _is_wall_clock_bound(node.test, self.wall_clock, self.measured, self.verdicts):
            self.found.append(Offence(self.path, node.lineno, WALL_CLOCK_ASSERT))
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        if not self.in_task and (_is_deadline_test(node.test) or _leaves_at_a_deadline(node)):
            self.found.append(Offence(self.path, node.lineno, DEADLINE_LOOP))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if not self.in_task and _is_fixed_sleep(node, self.constants):
            self.found.append(Offence(self.path, node.lineno, FIXED_SLEEP))
        self.generic_visit(node)


def offences_in(source: str, path: str = "<snippet>", task_module: bool = False) -> list[Offence]:
    tree = ast.parse(source)
    finder = _Finder(path, _module_constants(tree), task_module, _reads_wall_clock(tree))
    finder.visit(tree)
    return finder.found


def suite_offences() -> list[Offence]:
    found: list[Offence] = []
    for file in sorted(TESTS.rglob("*.py")):
        if file == SELF or ".venv" in file.parts:
            continue
        if _is_task_module(file) or file == SHARED_POLL:
            continue
        relative = file.relative_to(TESTS.parent).as_posix()
        found += offences_in(file.read_text(), relative)
    return found


# Exceptions, per (path, kind): none. Lower a count when you fix one; never raise it.
ALLOWED: dict[tuple[str, str], int] = {}


def allowance_breaches(
    found: list[Offence], allowed: dict[tuple[str, str], int]
) -> tuple[list[Offence], dict[tuple[str, str], int]]:
    """Offences in a (path, kind) beyond its allowance, and allowances above what is
    found (to be lowered to the count given, so the list keeps shrinking)."""
    actual = Counter((o.path, o.kind) for o in found)
    over = [o for o in found if actual[(o.path, o.kind)] > allowed.get((o.path, o.kind), 0)]
    stale = {key: actual.get(key, 0) for key, n in allowed.items() if actual.get(key, 0) < n}
    return over, stale


def test_no_new_wall_time_waits() -> None:
    over, stale = allowance_breaches(suite_offences(), ALLOWED)
    shown = "\n".join(str(o) for o in over)
    assert not over, f"waits on wall time beyond ALLOWED (wait on a signal instead):\n{shown}"
    lower = ", ".join(f"{path} {kind}: {n}" for (path, kind), n in stale.items())
    assert not stale, f"fewer waits on wall time than ALLOWED counts: lower these entries to {lower}"


# The checker's own cases: each shape it must find, and what it must leave alone.


def _kinds(source: str, task_module: bool = False) -> list[str]:
    return [o.kind for o in offences_in(source, task_module=task_module)]


def test_finds_wall_clock_bounds() -> None:
    assert _kinds("import time\nassert elapsed < 2.0") == [WALL_CLOCK_ASSERT]
    assert _kinds("from time import monotonic\nassert 1 <= result.took_ms") == [WALL_CLOCK_ASSERT]
    assert _kinds("import time\nassert run.duration() >= 0.5") == [WALL_CLOCK_ASSERT]
    assert _kinds("t0 = loop.time()\nassert elapsed < 2.0") == [WALL_CLOCK_ASSERT]
    assert _kinds("assert time.monotonic() - start < limit") == [WALL_CLOCK_ASSERT]
    assert _kinds("assert ok and perf_counter() - t0 < 1") == [WALL_CLOCK_ASSERT]


def test_finds_bounds_on_figures_measured_earlier() -> None:
    handover = "def f():\n    t = time.monotonic()\n    stop()\n    handover = time.monotonic() - t\n"
    assert _kinds(handover + "    assert handover < TTL / 5") == [WALL_CLOCK_ASSERT]
    failover = "def f():\n    killed_at = time.time()\n    failover = first - killed_at\n"
    assert _kinds(failover + "    assert 0 < failover < BOUND") == [WALL_CLOCK_ASSERT]
    p99 = (
        "def f():\n    checks = []\n    for _ in range(9):\n        t0 = time.perf_counter()\n"
        "        checks.append(time.perf_counter() - t0)\n    p99 = quantiles(checks)[98]\n"
    )
    assert _kinds(p99 + "    assert p99 < STARVED") == [WALL_CLOCK_ASSERT]
    late = (
        "def f():\n    back = time.time()\n    lateness = [r - back for r in rows]\n"
        "    late = [x for x in lateness if x > LIMIT]\n"
    )
    assert _kinds(late + "    assert not late") == [WALL_CLOCK_ASSERT]


def test_leaves_behavioural_asserts() -> None:
    assert _kinds("assert result.state == 'done'") == []
    assert _kinds("assert count < 3") == []
    # Spans on an injected clock, in a module that never reads the wall clock.
    assert _kinds("took = clock.monotonic() - began\nassert took <= TTL") == []
    assert _kinds("assert elapsed is not None") == []
    assert _kinds("assert durations.parse(mean) > dt.timedelta()") == []
    assert _kinds("assert h.cancel_deadline >= t0 + 10.0") == []
    assert _kinds("assert err.code is Code.DEADLINE_EXCEEDED") == []
    # A clock read that is not what the assert orders: an id, a count, a stamp's presence.
    measured = "def f():\n    began = time.time()\n    rows = read()\n    n = len(rows)\n"
    assert _kinds(measured + "    assert n < 3 and began") == []
    early = "def f():\n    t = time.time()\n    early = [r for r in rows if r.start < r.due]\n"
    assert _kinds(early + "    assert not early") == []


def test_finds_fixed_sleeps() -> None:
    assert _kinds("time.sleep(0.5)") == [FIXED_SLEEP]
    assert _kinds("async def f():\n    await asyncio.sleep(1)") == [FIXED_SLEEP]
    assert _kinds("from time import sleep\nsleep(2)") == [FIXED_SLEEP]
    assert _kinds("PAUSE = 0.2\ndef f():\n    time.sleep(PAUSE)") == [FIXED_SLEEP]
    assert _kinds("asyncio.sleep(delay=3)") == [FIXED_SLEEP]


def test_leaves_yields_and_task_bodies() -> None:
    assert _kinds("async def f():\n    await asyncio.sleep(0)") == []
    assert _kinds("time.sleep(interval)") == []
    assert _kinds("@task\nasync def slow(s):\n    await asyncio.sleep(0.5)") == []
    assert _kinds("@pool.task(retries=2)\ndef slow():\n    time.sleep(1)") == []
    assert _kinds("async def work():\n    await asyncio.sleep(1)", task_module=True) == []
    assert _kinds("@task\ndef spin():\n    while time.monotonic() < end:\n        pass") == []


def test_finds_deadline_loops() -> None:
    assert _kinds("while time.monotonic() < deadline:\n    pass") == [DEADLINE_LOOP]
    assert _kinds("while not done and time.time() < end:\n    pass") == [DEADLINE_LOOP]
    assert _kinds("while loop.time() < stop:\n    pass") == [DEADLINE_LOOP]
    assert _kinds("while now() < self.deadline:\n    pass") == [DEADLINE_LOOP]
    assert _kinds("while True:\n    assert time.monotonic() < deadline, 'x'") == [DEADLINE_LOOP]
    assert _kinds("while True:\n    if loop.time() > deadline:\n        raise AssertionError") == [
        DEADLINE_LOOP
    ]


def test_the_allowance_only_shrinks() -> None:
    a1, a2, b1 = (
        Offence("a.py", 1, FIXED_SLEEP),
        Offence("a.py", 2, FIXED_SLEEP),
        Offence("b.py", 1, DEADLINE_LOOP),
    )
    assert allowance_breaches([a1, a2], {("a.py", FIXED_SLEEP): 2}) == ([], {})
    # A new offence, in an allowed file or another, fails with every offence of its kind there.
    assert allowance_breaches([a1, a2], {("a.py", FIXED_SLEEP): 1}) == ([a1, a2], {})
    assert allowance_breaches([a1, b1], {("a.py", FIXED_SLEEP): 1}) == ([b1], {})
    # A file that improved must have its count lowered.
    assert allowance_breaches([a1], {("a.py", FIXED_SLEEP): 2}) == ([], {("a.py", FIXED_SLEEP): 1})
    assert allowance_breaches([], {("b.py", DEADLINE_LOOP): 1}) == ([], {("b.py", DEADLINE_LOOP): 0})


def test_leaves_other_loops() -> None:
    assert _kinds("while queue:\n    queue.pop()") == []
    assert _kinds("while attempts < 3:\n    attempts += 1") == []
    assert _kinds("while True:\n    if time.monotonic() > deadline:\n        log(late)") == []


if __name__ == "__main__":
    for offence in suite_offences():
        print(offence)
    sys.exit(0)
