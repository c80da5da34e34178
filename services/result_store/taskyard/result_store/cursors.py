"""Page tokens (cursors) of the list reads: opaque to the caller, checked on the way back in."""

from __future__ import annotations

import base64
import binascii

from taskyard.core import errors
from taskyard.core.errors import FieldViolation

from .uuids import norm_uuid


def _bad_page_token(field: str, why: str) -> errors.TaskyardError:

    return errors.TaskyardError(
        errors.Code.INVALID_ARGUMENT,
        "INVALID_PAGE_TOKEN",
        f"{field} is not a valid page token: {why}",
        (FieldViolation(field=field, description=f"not a token returned by a previous call ({why})"),),
    )


def encode_cursor(*parts: object) -> str:
    raw = ":".join(str(p) for p in parts).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, tag: str, n: int, field: str) -> list[str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise _bad_page_token(field, "undecodable") from exc
    parts = raw.split(":")
    if len(parts) != n + 1 or parts[0] != tag:
        raise _bad_page_token(field, "wrong shape")
    return parts[1:]


def _int_part(value: str, field: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise _bad_page_token(field, "not a number") from exc


def _uuid_part(value: str, field: str) -> str:
    u = norm_uuid(value)
    if u is None:
        raise _bad_page_token(field, "bad id")
    return u
