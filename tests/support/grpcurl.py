"""Find and run grpcurl, returning parsed JSON.

Looked up in the checkout's .tools/bin (where ``tools/install-tools.sh grpcurl``
puts the pinned version), then on PATH, $GOBIN, $GOPATH/bin and ~/go/bin. When it
is missing, ``require()`` fails the test when CI=true (CI installs it) and skips it
with the install command elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support.tools import missing

INSTALL_HINT = "tools/install-tools.sh grpcurl"
TOOLS_BIN = Path(__file__).resolve().parents[2] / ".tools" / "bin"


def find() -> str | None:
    pinned = TOOLS_BIN / "grpcurl"
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return str(pinned)
    found = shutil.which("grpcurl")
    if found:
        return found
    dirs: list[Path] = []
    if os.environ.get("GOBIN"):
        dirs.append(Path(os.environ["GOBIN"]))
    for gopath in filter(None, os.environ.get("GOPATH", "").split(os.pathsep)):
        dirs.append(Path(gopath) / "bin")
    dirs.append(Path.home() / "go" / "bin")
    for d in dirs:
        candidate = d / "grpcurl"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def require() -> str:
    path = find()
    if path is not None:
        return path
    missing(f"grpcurl not found in .tools/bin, on PATH or in Go's bin directories: {INSTALL_HINT}")


class GrpcurlError(AssertionError):
    def __init__(self, argv: list[str], returncode: int, stdout: str, stderr: str) -> None:
        super().__init__(f"grpcurl exited {returncode}: {' '.join(argv)}\nstdout: {stdout}\nstderr: {stderr}")
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def run_raw(
    args: list[str], *, timeout: float = 30.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    argv = [require(), *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise GrpcurlError(argv, proc.returncode, proc.stdout, proc.stderr)
    return proc


def parse_stream(text: str) -> list[Any]:
    """grpcurl prints one pretty JSON document per message; decode them all."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    i = 0
    text = text.strip()
    while i < len(text):
        obj, end = decoder.raw_decode(text, i)
        out.append(obj)
        i = end
        while i < len(text) and text[i].isspace():
            i += 1
    return out


def call(
    target: str,
    method: str,
    data: Any = None,
    *,
    timeout: float = 30.0,
    extra: list[str] | None = None,
    plaintext: bool = True,
) -> Any:
    """Call ``method`` (e.g. ``taskyard.v1.TaskService/SubmitTask``) with JSON ``data``
    and return the decoded reply (a list for streaming replies). With ``plaintext=False``
    ``extra`` carries the TLS flags (``-cacert``, ``-cert``, ``-key``) and headers."""
    args = [*(["-plaintext"] if plaintext else []), *(extra or [])]
    if data is not None:
        args += ["-d", data if isinstance(data, str) else json.dumps(data)]
    args += [target, method]
    docs = parse_stream(run_raw(args, timeout=timeout).stdout)
    if len(docs) == 1:
        return docs[0]
    return docs


def list_services(target: str, *, timeout: float = 30.0) -> list[str]:
    return run_raw(["-plaintext", target, "list"], timeout=timeout).stdout.split()
