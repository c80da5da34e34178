"""Tenants in the in-memory store (``memory.MemoryStore``): their rows and version
as ``tenants.Tenants`` keeps them in tenants and tenant_version, with the same
checks and refusals. No event is logged or published (the fake has neither)."""

from __future__ import annotations

import dataclasses

from taskyard.bus.v1 import tenants_pb2
from taskyard.core.clock import Clock
from taskyard.v1 import tenant_service_pb2 as pub

from .. import tenants as rules

Op = tenants_pb2.ChangeTenantRequest.Op


@dataclasses.dataclass(slots=True)
class TenantTable:
    clock: Clock
    rows: dict[str, pub.Tenant] = dataclasses.field(default_factory=dict)
    version: int = 0

    def read(self, req: tenants_pb2.ReadTenantsRequest) -> tenants_pb2.ReadTenantsReply:
        rules.check_read(req)
        if req.known_version and req.known_version == self.version:
            return tenants_pb2.ReadTenantsReply(version=self.version, unchanged=True)
        names = set(req.names)
        found = [t for n, t in sorted(self.rows.items()) if n > req.after and (not names or n in names)]
        return tenants_pb2.ReadTenantsReply(tenants=found[: req.limit or None], version=self.version)

    def change(self, req: tenants_pb2.ChangeTenantRequest) -> tenants_pb2.ChangeTenantReply:
        rules.check_change(req)
        t = req.tenant
        now_us = int(self.clock.now() * 1_000_000)
        row = self.rows.get(t.name)
        if req.op == Op.OP_CREATE:
            if row is not None:
                raise rules.already_exists(t.name)
            if len(self.rows) >= rules.MAX_TENANTS:
                raise rules.too_many()
            row = self.rows[t.name] = pub.Tenant(name=t.name, state=pub.TENANT_STATE_ACTIVE)
            row.created_at.FromMicroseconds(now_us)
        elif row is None:
            raise rules.not_found(t.name)
        changed = True
        if req.op in (Op.OP_CREATE, Op.OP_UPDATE):
            row.quota.CopyFrom(t.quota)
            row.weight = t.weight or 1
            row.description = t.description
        else:
            state = pub.TENANT_STATE_SUSPENDED if req.op == Op.OP_SUSPEND else pub.TENANT_STATE_ACTIVE
            changed = row.state != state
            if changed:
                row.state = state
                if state == pub.TENANT_STATE_SUSPENDED:
                    row.suspended_at.FromMicroseconds(now_us)
                else:
                    row.ClearField("suspended_at")
        if changed:
            row.updated_at.FromMicroseconds(now_us)
            self.version += 1
        reply = tenants_pb2.ChangeTenantReply(version=self.version)
        reply.tenant.CopyFrom(row)
        return reply
