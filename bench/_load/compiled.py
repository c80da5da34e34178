"""The compiled generator (--client go): bench/_load/go, built once per run with the Go
toolchain, run as a process per generator with a JSON line per step each way."""

from __future__ import annotations

import dataclasses
import json
import select
import shutil
import subprocess
import time
from pathlib import Path

from _compare.child import dying_with_runner

from .plan import Job, Outcome, Target

SOURCE = Path(__file__).resolve().parent / "go"


def build(work: Path) -> Path:
    """The generator's binary, built from SOURCE against clients/go (its `replace`)."""
    go = shutil.which("go")
    if go is None:
        raise SystemExit("bench/load --client go: the Go toolchain (go) is not on PATH")
    binary = work / "loadgen"
    done = subprocess.run([go, "build", "-o", str(binary), "."], cwd=SOURCE, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench/load --client go: go build failed:\n{done.stderr}")
    return binary


class CompiledGenerator:
    """One process of the compiled generator, driven like a spawned Python one."""

    def __init__(self, target: Target) -> None:
        self.process = subprocess.Popen(
            dying_with_runner(
                [
                    target.binary,
                    "-target",
                    target.address,
                    "-channels",
                    str(target.channels),
                    "-mode",
                    target.mode,
                ]
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout

    @property
    def pid(self) -> int:
        return self.process.pid

    def ready(self, timeout: float) -> bool:
        readable, _, _ = select.select([self._out], [], [], timeout)
        return bool(readable) and json.loads(self._out.readline() or "null") == "ready"

    def send(self, job: Job) -> None:
        fields = dataclasses.asdict(job)
        fields["kind"] = job.kind.value
        # The start as a delay from now: the two processes share no clock reading.
        fields["delay"] = fields.pop("start_at") - time.monotonic()
        self._in.write(json.dumps(fields) + "\n")
        self._in.flush()

    def recv(self) -> Outcome:
        line = self._out.readline()
        if not line:
            raise SystemExit(f"bench/load: generator {self.pid} ended ({self.process.poll()})")
        fields = json.loads(line)
        for name in ("latencies_ms", "lags_ms"):
            fields[name] = tuple(fields[name])
        return Outcome(**fields)

    def stop(self) -> None:
        self._in.close()  # its end of input: it exits
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()  # by its PID
            self.process.wait(timeout=10)
        self._out.close()
