"""The checks of an insert: each record checked and normalized into its insert row."""
# Length: validate_insert and _plain_params run for every row inserted: one pass, no call a field.

from __future__ import annotations

import json
from collections.abc import Container, Mapping

from taskyard.bus.v1 import task_record_pb2, tasks_pb2
from taskyard.core import limits, names, tenants
from taskyard.core import validation as rules
from taskyard.core.errors import FieldViolation
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState

from ..arrays import text_array
from ..transitions import _INITIAL_VALUES
from ..uuids import _is_canonical_uuid, norm_uuid
from .insert_row import InsertRow

S = TaskState


def validate_insert(
    req: tasks_pb2.InsertTasksRequest,
    *,
    known_names: Container[str] | None,
    max_payload_bytes: int,
    now_us: int,
    payloads_checked: bool = False,
) -> list[InsertRow]:
    """Check and normalize the records; returns one insert row per record.

    Every record meets the rules the gateway applies (``core.validation``, with
    the record's own field names), whoever sent it; ``known_names`` are the task
    names some pool has declared (None: a caller that checked them itself).
    ``payloads_checked``: the sender checked the args and kwargs JSON already (a
    scheduler, scheduler/payloads.py); the common record's is then not decoded
    again (their size is still checked, and the database takes only valid JSON).
    """
    out: list[InsertRow] = []
    violations: list[FieldViolation] = []
    for i, r in enumerate(req.tasks):
        tenant = r.tenant
        if tenant and not _bare_names(r, tenant, f"tasks[{i}]", violations):
            continue
        # The common record (what a gateway builds) in one cheap pass; any other
        # goes through the shared rules, which alone word the violations.
        params = _plain_params(r, known_names, max_payload_bytes, now_us, payloads_checked)
        if params is not None:
            out.append(_qualified(params, r, tenant) if tenant else params)
            continue
        f = f"tasks[{i}]"
        found: list[FieldViolation] = []
        tid = norm_uuid(r.id)
        if tid is None:
            found.append(FieldViolation(field=f"{f}.id", description="must be a UUID"))
        found += rules.check_record(
            r,
            path=f,
            fields=rules.RECORD_FIELDS,
            known_names=known_names,
            max_payload_bytes=max_payload_bytes,
            now_us=now_us,
        )
        parent = norm_uuid(r.parent_id) if r.parent_id else None
        root = norm_uuid(r.root_id) if r.root_id else None
        if r.root_id and root is None:
            found.append(FieldViolation(field=f"{f}.root_id", description="must be a UUID"))
        flow, limit_names = _flow_params(r, f, found)
        state = r.state or int(S.QUEUED)
        if state not in _INITIAL_VALUES:
            found.append(
                FieldViolation(
                    field=f"{f}.state", description="a new task must be PENDING, QUEUED or SCHEDULED"
                )
            )
            state = int(S.QUEUED)
        if found:
            violations += found
            continue
        row = InsertRow(
            tid or "",
            r.name,
            r.args_json.decode() if r.args_json else "[]",
            r.kwargs_json.decode() if r.kwargs_json else "{}",
            int(Priority.from_wire(r.priority)),
            r.queue or "default",
            r.timeout_ms,
            r.max_retries,
            r.request_id,
            parent,
            root,
            json.dumps(dict(r.labels)) if r.labels else "{}",
            TaskState(state).name,
            max(1, r.attempt),
            r.created_at_us,
            r.run_at_us,
            json.dumps(dict(r.trace_headers)) if r.trace_headers else "{}",
            # The task graph (dependencies.py): depends_on as an array literal,
            # the idempotency key and when it expires.
            *_graph_params(r),
            flow,
            limit_names,
        )
        out.append(_qualified(row, r, tenant) if tenant else row)
    if violations:
        raise rules.invalid(violations)
    return out


def _bare_names(r: task_record_pb2.TaskRecord, tenant: str, path: str, found: list[FieldViolation]) -> bool:
    """A tenant's record with its queue name as its tenant knows it
    (core/tenants.strip), for the rules, which know no tenants; False when the
    tenant is no tenant's name. Its limit names stay as sent: a tenant's own
    "acme/settle.concurrency" and the pool's declared "settle.concurrency" are two
    limits, not one used twice (_limit_name qualifies them as stored)."""
    problem = tenants.problem(tenant)
    if problem is not None:
        found.append(
            rules.Violation(field=f"{path}.tenant", description=problem, reason=tenants.INVALID_TENANT)
        )
        return False
    r.queue = tenants.strip(tenant, r.queue)
    return True


def _limit_name(tenant: str, declared: Container[str], name: str) -> str:
    """A limit use's name as stored for ``tenant``'s task: qualified, but for the
    limits its task name declares (by origin: ``flow.declared``, core/limits.add_declared),
    which are the pool's, each tenant's tasks in buckets of their own (scheduler/admission.py)."""
    if name in declared:
        return name
    return tenants.qualify(tenant, tenants.strip(tenant, name))


def qualify_names(r: task_record_pb2.TaskRecord) -> None:
    """A tenant's record with its queue and limit names as stored, qualified
    (bare ones qualified, qualified ones kept), as an insert stores them."""
    tenant = r.tenant
    r.queue = tenants.qualify(tenant, tenants.strip(tenant, r.queue or "default"))
    if r.HasField("flow"):
        for use in r.flow.uses:
            use.limit = _limit_name(tenant, r.flow.declared, use.limit)


def _qualified(row: InsertRow, r: task_record_pb2.TaskRecord, tenant: str) -> InsertRow:
    """``row`` of a tenant's record as stored: its queue, limit names, request id and
    idempotency key qualified (core/tenants.qualify), so that two tenants' names and
    keys never meet; ``r`` carries the qualified names on (its queue and flow)."""
    r.queue = queue = tenants.qualify(tenant, row.queue)
    flow, limit_names = row.flow, row.limit_names
    if flow is not None and r.flow.uses:
        for use in r.flow.uses:
            use.limit = _limit_name(tenant, r.flow.declared, use.limit)
        flow = r.flow.SerializeToString(deterministic=True)
        limit_names = text_array([use.limit for use in r.flow.uses])
    return row._replace(
        queue=queue,
        request_id=tenants.qualify(tenant, row.request_id) if row.request_id else "",
        idempotency_key=tenants.qualify(tenant, row.idempotency_key) if row.idempotency_key else "",
        flow=flow,
        limit_names=limit_names,
        tenant=tenant,
    )


_QUEUED = int(S.QUEUED)
_STATE_NAMES = {int(s): s.name for s in S}
# Every priority the rules accept (0: NORMAL), as the value stored.
_WIRE_PRIORITY = {0: int(Priority.NORMAL), **{p: int(Priority.from_wire(p)) for p in rules.PRIORITIES}}
_EMPTY_LIST = b"[]"
_EMPTY_OBJECT = b"{}"


def _fits(value: str, max_chars: int) -> bool:
    return len(value) <= max_chars and "\x00" not in value


def _plain_map(values: Mapping[str, str], most: int, key_chars: int, value_chars: int) -> str | None:
    """A label or header map as JSON when it is certainly within the rules, else None."""
    if not values:
        return "{}"
    if len(values) > most:
        return None
    if not all(_fits(k, key_chars) and _fits(v, value_chars) for k, v in values.items()):
        return None
    return json.dumps(dict(values))


def _plain_params(
    r: task_record_pb2.TaskRecord,
    known_names: Container[str] | None,
    max_payload_bytes: int,
    now_us: int,
    payloads_checked: bool = False,
) -> InsertRow | None:
    """The insert row of ``r`` when ``rules.check_record`` would certainly
    find nothing in it and its ids are canonical, without dependencies or an
    idempotency key; else None, and the caller runs the full rules. The gateway
    already checked the record, so the store's own pass must cost little: each
    field is read once (a protobuf attribute read is not cheap) and no field
    path is built."""
    if r.depends_on or r.idempotency_key or r.HasField("flow"):
        return None
    tid = r.id
    state = r.state or _QUEUED
    root = r.root_id or None
    parent = r.parent_id or None
    if (
        not _is_canonical_uuid(tid)
        or state not in _INITIAL_VALUES
        or (root is not None and not _is_canonical_uuid(root))
        or (parent is not None and not _is_canonical_uuid(parent))
    ):
        return None
    name = r.name
    if not name or not _fits(name, rules.MAX_NAME_CHARS):
        return None
    if known_names is not None and name not in known_names:
        return None
    args = r.args_json
    kwargs = r.kwargs_json
    if len(args) + len(kwargs) > max_payload_bytes:
        return None
    found: list[rules.Violation] = []
    if not payloads_checked:
        if args and args != _EMPTY_LIST:
            rules.check_value(found, "args", args, kind=list)
        if kwargs and kwargs != _EMPTY_OBJECT:
            rules.check_value(found, "kwargs", kwargs, kind=dict)
    priority = _WIRE_PRIORITY.get(r.priority)
    timeout_ms = r.timeout_ms
    max_retries = r.max_retries
    queue = r.queue
    request_id = r.request_id
    if (
        found
        or priority is None
        or not 0 <= timeout_ms <= rules.MAX_TIMEOUT_MS
        or not -1 <= max_retries <= rules.MAX_RETRIES_LIMIT
        or (queue and not names.fits(queue))
        or not _fits(request_id, rules.MAX_REQUEST_ID_CHARS)
    ):
        return None
    created_us = r.created_at_us
    run_at_us = r.run_at_us
    if run_at_us and run_at_us - (created_us or now_us) > rules.MAX_AHEAD_US:
        return None
    labels_json = _plain_map(
        r.labels, rules.MAX_LABELS, rules.MAX_LABEL_KEY_CHARS, rules.MAX_LABEL_VALUE_CHARS
    )
    headers_json = _plain_map(
        r.trace_headers, rules.MAX_TRACE_HEADERS, rules.MAX_TRACE_HEADER_CHARS, rules.MAX_TRACE_HEADER_CHARS
    )
    if labels_json is None or headers_json is None:
        return None
    # _make: a call with a field per argument costs twice as much, on every task.
    return InsertRow._make(
        (
            tid,
            name,
            args.decode() if args else "[]",
            kwargs.decode() if kwargs else "{}",
            priority,
            queue or "default",
            timeout_ms,
            max_retries,
            request_id,
            parent,
            root,
            labels_json,
            _STATE_NAMES[state],
            max(1, r.attempt),
            created_us,
            run_at_us,
            headers_json,
            "{}",
            "",
            0,
            None,
            None,
            "",
        )
    )


def _flow_params(
    r: task_record_pb2.TaskRecord, path: str, found: list[FieldViolation]
) -> tuple[bytes | None, str | None]:
    """The flow and limit_names columns of ``r``: (None, None) without flow
    control (an empty FlowControl too). Its uses meet the edge's rules
    (core/limits.use_violations), bar whether the limits exist: the gateway checks
    that against its catalog, and a limit deleted since is ignored by admission."""
    if not r.HasField("flow"):
        return None, None
    flow = r.flow
    uses = flow.uses
    if not uses and not flow.fairness_key:
        return None, None
    found += limits.use_violations(
        uses, flow.fairness_key, path=f"{path}.flow", uses_field="uses", max_uses=limits.MAX_STORED_USES
    )
    names_ = text_array([u.limit for u in uses]) if uses else None
    return flow.SerializeToString(deterministic=True), names_


def _graph_params(r: task_record_pb2.TaskRecord) -> tuple[str, str, int]:
    deps: list[str] = []
    for raw in r.depends_on:  # every one a UUID (checked)
        dep = norm_uuid(raw)
        if dep is not None and dep not in deps:
            deps.append(dep)
    expires_us = r.idempotency_expires_at_us if r.idempotency_key else 0
    return "{" + ",".join(deps) + "}", r.idempotency_key, expires_us
