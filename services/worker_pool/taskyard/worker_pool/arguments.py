"""Arguments that do not fit the task's signature: a failure no retry can mend.

Python refuses such a call with a ``TypeError`` before the body runs, the same
type a body raises for its own reasons. Only after a call has failed with one
is the signature consulted (nothing is spent on the calls that work): the call
is a misfit when the arguments do not bind and no frame of the task's own body
is in the traceback: the body never started.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import CodeType
from typing import Any


class ArgumentsMismatch(TypeError):
    """The task was called with arguments its signature refuses (never retried)."""


def misfit(
    name: str, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], exc: TypeError
) -> ArgumentsMismatch | None:
    """The refusal to report when ``exc`` came from binding ``args``/``kwargs`` to ``fn``, else None."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a callable without one (some builtins): cannot tell
        return None
    try:
        signature.bind(*args, **kwargs)
    except TypeError as refused:
        if _ran(exc, fn):
            return None
        return ArgumentsMismatch(f"arguments do not fit {name}{_bare(signature)}: {refused}")
    return None


def _bare(signature: inspect.Signature) -> inspect.Signature:
    """The parameters as a caller passes them: annotations (often strings) left out."""
    empty = inspect.Parameter.empty
    return signature.replace(
        parameters=[p.replace(annotation=empty) for p in signature.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )


def _ran(exc: BaseException, fn: Callable[..., Any]) -> bool:
    """Whether the task's own body (the function a decorator wraps, if any) is in ``exc``'s traceback."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if not isinstance(code, CodeType):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return True
        tb = tb.tb_next
    return False
