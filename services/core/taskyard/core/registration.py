"""A pool's standing with the scheduler: its registration, and its survey answers.

Whatever serves attempts as a pool (the worker-pool's manager, a worker stream at the
gateway) registers with the leader whenever that is wanted: at start, when its PAIR
peer went away, when a survey comes from a scheduler it is not registered with. The
request goes to every scheduler's registration port (only the leader listens), and is
tried again with backoff until one answers. The reply names the leader's survey
address, which then replaces the list of every scheduler's: the pool answers the
leader's surveys (what it holds, its free slots) and no one else's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pynng

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import contract, dialer, errors, rpc, transport
from taskyard.core.config import BusSettings
from taskyard.core.retry import Backoff

REGISTER_TIMEOUT = 3.0


class Registration:
    """``describe`` is what to register (asked anew each time), ``survey_reply`` the
    answer to a survey, ``on_registered`` what follows a registration (a slot notice),
    and ``active`` whether to go on registering at all. ``sign_as`` signs as another
    role (a worker stream signs as a pool)."""

    def __init__(
        self,
        settings: BusSettings,
        *,
        describe: Callable[[], dispatch_pb2.Register],
        survey_reply: Callable[[], dispatch_pb2.SurveyReply],
        on_registered: Callable[[], None],
        active: Callable[[], bool],
        log: logging.Logger,
        sign_as: str = "",
    ) -> None:
        self._settings = settings
        self._describe = describe
        self._survey_reply = survey_reply
        self._on_registered = on_registered
        self._active = active
        self._log = log
        self._sign_as = sign_as
        self.scheduler_id = ""
        self.registered = asyncio.Event()
        self._wanted = asyncio.Event()
        # Every scheduler's until one answers a registration with its own.
        self._survey_addresses = settings.survey_addresses
        self._respondent: Any = None

    def want(self) -> None:
        self._wanted.set()

    async def run(self) -> None:
        """Registers whenever wanted, until no longer ``active``."""
        s = self._settings
        req = rpc.Requester(
            s.registration_addresses,
            max_message_bytes=s.max_message_bytes,
            timeout=REGISTER_TIMEOUT,
            sign_as=self._sign_as,
        )
        backoff = Backoff()
        try:
            while True:
                await self._wanted.wait()
                if not self._active():
                    return
                self._wanted.clear()
                try:
                    reply = await req.call(contract.REGISTER, self._describe())
                except errors.TaskyardError as exc:
                    delay = backoff.next_delay()
                    failures = backoff.failures
                    (self._log.warning if failures in (1, 10) or failures % 100 == 0 else self._log.debug)(
                        "registration with %s failed (%d): %s",
                        ", ".join(s.registration_addresses),
                        failures,
                        exc.message,
                    )
                    self._wanted.set()
                    await asyncio.sleep(delay)
                    continue
                backoff.reset()
                self._registered_with(reply)
        finally:
            req.close()

    def _registered_with(self, reply: dispatch_pb2.RegisterReply) -> None:
        if reply.scheduler_id != self.scheduler_id:
            self._log.info("registered with scheduler %s", reply.scheduler_id or "?")
        self.scheduler_id = reply.scheduler_id
        if reply.survey_address and (reply.survey_address,) != self._survey_addresses:
            self._survey_addresses = (reply.survey_address,)
            old, self._respondent = self._respondent, self._open_respondent()
            if old is not None:
                old.close()
        self.registered.set()
        self._on_registered()

    # ------------------------------------------------------------ surveys
    def open_surveys(self) -> None:
        self._respondent = self._open_respondent()

    def _open_respondent(self) -> Any:
        return dialer.open_dialer(
            pynng.Respondent0, self._survey_addresses, max_message_bytes=self._settings.max_message_bytes
        )

    async def answer_surveys(self) -> None:
        """Until closed: each survey answered on the socket it came by."""
        while True:
            sock = self._respondent
            try:
                raw = await sock.arecv()
            except pynng.Closed:
                if sock is self._respondent:
                    return
                continue  # replaced by a new one (the survey address changed)
            try:
                env = transport.decode(raw)  # the reply repeats its message id
                survey = contract.SURVEY.read(env)
            except Exception:
                self._log.warning("malformed survey dropped")
                continue
            if survey is None:
                continue
            if survey.scheduler_id and self.registered.is_set() and survey.scheduler_id != self.scheduler_id:
                self._log.info(
                    "survey from scheduler %s (registered with %s): registering again",
                    survey.scheduler_id,
                    self.scheduler_id,
                )
                self._wanted.set()
            reply = contract.SURVEY.encode_answer(self._survey_reply(), message_id=env.message_id)
            try:
                await sock.asend(reply)
            except pynng.NNGException as exc:
                self._log.debug("survey reply dropped: %s", exc)

    def close(self) -> None:
        if self._respondent is not None:
            self._respondent.close()
