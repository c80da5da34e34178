"""A peer without the bus key that holds a pool's PAIR port (``python -m support.squatter
ADDRESS [--junk]``).

It dials ADDRESS with both pair protocols (whichever the pool speaks connects),
sends nothing, or with ``--junk`` one unsealed message per pipe, and prints one line
per pipe that connects ("connected pair1") and per connected pipe that closes
("closed pair1"), until it is killed. It imports nothing of Taskyard: it has no key.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import pynng

JUNK = b"\x08\x01" + b"not sealed" * 8


def _say(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str]) -> int:
    address, junk = argv[0], "--junk" in argv[1:]
    connected: set[int] = set()
    socks: list[Any] = []
    for name, cls in (("pair0", pynng.Pair0), ("pair1", pynng.Pair1)):
        sock = cls(reconnect_time_min=100, reconnect_time_max=250)

        def on_connect(pipe: Any, name: str = name) -> None:
            connected.add(pipe.id)
            _say(f"connected {name}")
            if junk:  # not from NNG's callback thread: a send may wait
                threading.Thread(target=pipe.send, args=(JUNK,), daemon=True).start()

        def on_remove(pipe: Any, name: str = name) -> None:
            if pipe.id in connected:  # a pipe refused at its handshake never connected
                _say(f"closed {name}")

        sock.add_post_pipe_connect_cb(on_connect)
        sock.add_post_pipe_remove_cb(on_remove)
        sock.dial(address, block=False)
        socks.append(sock)
    _say("dialing")
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
