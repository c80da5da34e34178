"""A route a test can cut: TCP relays from one loopback address to another, on
the same ports, that stop carrying bytes while cut and carry them on when healed.

Point one process (a pool, by its TASKYARD_STORE_HOST) at the relay's address
and only that process's route to what is behind it is cut: everything else,
its route to the scheduler included, works on. While cut, nothing is read on
either side (the connections stay open, TCP holds the bytes, new connections
are accepted and held), so it looks to the process like a route that silently
drops packets; healed, the held bytes go through in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

CHUNK = 64 * 1024


class Route:
    def __init__(self, listen_host: str, target_host: str, ports: Iterable[int]) -> None:
        self.listen_host = listen_host
        self.target_host = target_host
        self.ports = tuple(ports)
        self._loop = asyncio.new_event_loop()
        self._open = asyncio.Event()
        self._servers: list[asyncio.Server] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="route", daemon=True)

    # --- the test's side
    def start(self) -> Route:
        self._thread.start()
        self._started.wait(10)
        if self._error is not None:
            raise self._error
        return self

    def cut(self) -> None:
        self._loop.call_soon_threadsafe(self._open.clear)

    def heal(self) -> None:
        self._loop.call_soon_threadsafe(self._open.set)

    def close(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> Route:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the relay, on its own loop
    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._open.set()
            for port in self.ports:
                server = self._loop.run_until_complete(
                    asyncio.start_server(self._relay_for(port), self.listen_host, port, reuse_address=True)
                )
                self._servers.append(server)
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._started.set()
            return
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            for server in self._servers:
                server.close()
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            for writer in self._writers:
                writer.close()
            self._loop.close()

    def _relay_for(
        self, port: int
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]:
        async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._relay(reader, writer, port)

        return relay

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int) -> None:
        self._writers.add(writer)
        try:
            await self._open.wait()
            up_reader, up_writer = await asyncio.open_connection(self.target_host, port)
        except OSError:
            writer.close()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        self._writers.discard(writer)
        self._writers.discard(up_writer)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await self._open.wait()
                data = await reader.read(CHUNK)
                if not data:
                    break
                await self._open.wait()  # cut meanwhile: hold what was read
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()
