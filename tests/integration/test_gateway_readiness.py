"""The gateway's readiness follows its stores' answers (gateway/server.py): a store
that refuses (it cannot commit) makes it NOT_SERVING at once, a store slow to answer
only after several slow rounds in a row; its liveness follows its own loop only."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from integration.gateway_fakes import gateway_env
from support.waiting import wait_until_async

from taskyard.bus.v1 import pools_pb2
from taskyard.core import contract, errors
from taskyard.gateway import server

pytestmark = pytest.mark.asyncio

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _health(channel: grpc.aio.Channel, service: str) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return int(reply.status)


async def test_a_store_that_refuses_makes_the_gateway_unready_at_once_and_it_stays_alive() -> None:
    async with gateway_env() as env:
        serving_at_refusal: list[bool] = []

        async def refuse(req: pools_pb2.TaskNamesRequest) -> None:
            serving_at_refusal.append(env.gateway.serving)
            raise errors.TaskyardError(errors.Code.UNAVAILABLE, contract.STORE_NOT_READY, "cannot commit")

        env.backend.on_names = refuse
        await wait_until_async(lambda: len(serving_at_refusal) >= 2, 30, "two refused probes")
        assert serving_at_refusal[:2] == [True, False]  # the first refusal was enough
        assert await _health(env.channel, "") == NOT_SERVING
        # Liveness: the loop answers, whatever the stores say (a restart would cure nothing).
        assert await _health(env.channel, server.LIVENESS_SERVICE) == SERVING

        env.backend.on_names = None
        await wait_until_async(lambda: env.gateway.serving, 30, "the gateway to serve again")


async def test_a_slow_store_makes_the_gateway_unready_only_after_slow_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server, "STORE_PROBE_TIMEOUT", 0.2)
    async with gateway_env() as env:
        serving_at_probe: list[bool] = []
        release = asyncio.Event()

        async def hold(req: pools_pb2.TaskNamesRequest) -> None:
            serving_at_probe.append(env.gateway.serving)
            await release.wait()  # past the probe's limit: no answer in time

        env.backend.on_names = hold
        try:
            await wait_until_async(lambda: not env.gateway.serving, 60, "the gateway to give up on the store")
            # Each round is one probe (one store address): it was serving through the
            # first SLOW_ROUNDS of them, unanswered all.
            assert serving_at_probe[: server.SLOW_ROUNDS] == [True] * server.SLOW_ROUNDS
        finally:
            release.set()
