// One task: its record (args, result, attempts and failures with tracebacks,
// progress and context), why it waits (with the flow-control gate that holds it,
// if one does), its tree, its live log, a trace link, and the cancel and retry
// actions. Its events reload it as they come; a gate is asked again every few
// seconds while the task is queued (its holders and next admission change with
// other tasks' events, not its own).

import { call, config, named } from "../api.js";
import { badge, clock, duration, enumName, FINAL, h, json, replace, section, seconds, stateName, taskLink, time } from "../dom.js";
import { open } from "../sse.js";
import { actionButton, cancelTask, retried, retryTasks } from "./actions.js";

// Log lines kept on the page (the oldest go first).
const MAX_LOG_LINES = 5000;
// How often a queued task's explanation is asked again (ms).
const EXPLAIN_MS = 3000;
const GATES = new Set(["RATE_LIMITED", "CONCURRENCY_FULL", "FAIR_SHARE"]);

// The flow-control gate holding a queued task (ExplainTask's gate), as facts.
export function gate(explained) {
  const reason = String(explained.reason || "").replace("WAIT_REASON_", "");
  if (!GATES.has(reason) || !explained.gate) return "";
  const g = explained.gate;
  const rows = [["reason", reason]];
  if (reason === "FAIR_SHARE") {
    rows.push(["fairness key", h("span", { class: "mono" }, g.key || "(empty key)")],
      ["position", `${g.position || 0} of its key's tasks ahead`],
      ["keys ahead", `${g.keysAhead || 0} other key(s) waiting in its lane`]);
  } else {
    rows.push(["limit", h("a", { href: "#/limits" }, h("span", { class: "mono" }, g.limit || "-"))],
      ["key", h("span", { class: "mono" }, g.key || "(empty key)")]);
  }
  if (reason === "RATE_LIMITED") rows.push(["next admission", time(g.nextAdmissionAt)]);
  if (reason === "CONCURRENCY_FULL") {
    const ids = g.holderIds || [];
    rows.push(["held by", ids.length ? ids.map((id, i) => [i ? ", " : "", taskLink(id, id.slice(0, 13))]) : "-"]);
  }
  if (g.waited) rows.push(["waited", duration(seconds(g.waited))]);
  return h("div", { class: "gate card", id: "gate", "data-reason": reason },
    h("h2", {}, "Held at admission"),
    h("dl", { class: "facts" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-gate": k }, v)])));
}

function facts(task) {
  const rows = [
    ["id", h("span", { class: "mono" }, task.id)],
    ["queue", named(task, task.queue || "default")],
    ["priority", enumName(task.priority, "PRIORITY_")],
    ["attempt", `${task.attempt || 0} (max retries ${task.maxRetries >= 0 ? task.maxRetries : "as declared"})`],
    ["worker", task.workerId || "-"],
    ["created", time(task.createdAt)],
    ["started", time(task.startedAt)],
    ["finished", time(task.finishedAt)],
    ["parent", task.parentId ? taskLink(task.parentId) : "-"],
    ["schedule", task.scheduleId || "-"],
  ];
  if (task.cancelRequested || task.cancelStep) {
    rows.push(["cancel", `${enumName(task.cancelStep, "CANCEL_STEP_")}${task.cancelReason ? ` (${task.cancelReason})` : ""}`]);
  }
  if (task.deadLetterReason) {
    const reason = String(task.deadLetterReason).replace("DEAD_LETTER_REASON_", "").toLowerCase().replace(/_/g, " ");
    const group = task.failure && task.failure.groupId;
    rows.push(["dead letter", [reason, group ? [" · ", h("a", { href: `#/failures/${encodeURIComponent(group)}` }, "its failure group")] : ""]]);
  }
  if (task.redriveId) {
    rows.push(["redriven", [h("a", { href: `#/redrives/${encodeURIComponent(task.redriveId)}` }, "by a redrive"),
      task.redrivenFromAttempt ? ` from attempt ${task.redrivenFromAttempt}` : ""]]);
  }
  if (task.labels) rows.push(["labels", Object.entries(task.labels).map(([k, v]) => `${k}=${v}`).join(", ")]);
  return h("dl", { class: "facts", id: "task-facts" },
    rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k }, v)]));
}

function attempts(task) {
  const failures = [...(task.failures || [])];
  if (task.failure && !failures.some((f) => f.attempt === task.failure.attempt)) failures.push(task.failure);
  const rows = failures.map((f) => h("li", { class: "failure" },
    h("p", {}, h("strong", {}, `attempt ${f.attempt || "?"}: ${f.type || "failure"}`), ` ${f.message || ""} `, time(f.failedAt),
      f.retryAt ? [" · retry at ", time(f.retryAt)] : "",
      f.redriveId ? [" · ", h("a", { href: `#/redrives/${encodeURIComponent(f.redriveId)}` }, "redriven")] : ""),
    f.traceback ? h("details", {}, h("summary", {}, "traceback"), h("pre", { class: "traceback" }, f.traceback)) : ""));
  const last = h("li", {}, h("p", {}, h("strong", {}, `attempt ${task.attempt || 0}: `), badge(task.state)));
  return h("ol", { class: "attempts", id: "attempts" }, rows, FINAL.has(stateName(task.state)) && failures.length ? "" : last);
}

// The Result box: the result, or why there is none (a failure says what it was).
function outcome(task) {
  const state = stateName(task.state);
  if (state === "SUCCESS") return json(task.result ?? null);
  if (state === "FAILURE") {
    const f = task.failure || {};
    return h("p", { class: "failure", "data-outcome": "failure" },
      h("strong", {}, `failed: ${f.type || "failure"}`), f.message ? ` ${f.message}` : "",
      ` (attempt ${f.attempt || task.attempt || "?"}; its traceback is under Attempts and failures)`);
  }
  if (state === "CANCELLED") {
    return h("p", { "data-outcome": "cancelled" }, `cancelled${task.cancelReason ? `: ${task.cancelReason}` : ""}: no result`);
  }
  return h("p", { "data-outcome": "pending" }, "no result yet");
}

function progress(task) {
  const ctx = task.context || {};
  const p = ctx.progress;
  return [
    p ? h("p", {}, h("progress", { max: 1, value: p.fraction, "aria-label": "progress" }), ` ${Math.round(p.fraction * 100)}% ${p.message || ""}`) : "",
    Object.keys(ctx).length ? json(ctx) : h("p", {}, "no context"),
  ];
}

function tree(reply, id) {
  const nodes = reply.nodes || [];
  if (nodes.length <= 1) return h("p", {}, "no parent, children or dependencies");
  return h("ul", { class: "tree" }, nodes.map((n) => h("li", { style: { marginLeft: `${(n.depth || 0) * 1.25}rem` } },
    n.task.id === id ? h("strong", { "aria-current": "true" }, n.task.name) : taskLink(n.task.id, n.task.name), " ", badge(n.task.state))),
  reply.truncated ? h("li", {}, "… (more than 10,000 tasks)") : "");
}

function logLine(line) {
  return h("div", { class: `log ${line.type || ""}`, "data-offset": line.offset || 0 },
    h("span", { class: "when" }, line.createdAt ? clock(line.createdAt) : ""), " ",
    h("span", { class: "type" }, line.type || "log"), " ", line.message || "");
}

function traceLink(template, traceId) {
  const url = template.includes("{trace_id}") ? template.replace("{trace_id}", traceId)
    : `${template.replace(/\/$/, "")}/trace/${traceId}`;
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer", id: "trace-link" }, `trace ${traceId.slice(0, 8)}…`);
}

export function render(main, id, page) {
  const title = h("h1", {}, "Task");
  const actions = h("div", { class: "toolbar" });
  const box = {
    facts: h("div", {}, "loading"), explain: h("p", { id: "explain" }), gate: h("div", {}), args: h("div", {}),
    result: h("div", { id: "result" }), attempts: h("div", {}), progress: h("div", { id: "progress" }),
    tree: h("div", { id: "tree" }), trace: h("span", {}),
  };
  const logs = h("div", { class: "logs", id: "logs", tabindex: 0, role: "log", "aria-label": "task log" });
  const logState = h("span", { class: "meta" });
  replace(main, h("p", {}, h("a", { href: "#/tasks" }, "← Tasks")), title, actions, box.explain, box.gate,
    h("div", { class: "columns" },
      section("Record", box.facts, box.trace),
      section("Progress and context", box.progress)),
    section("Log", logState, logs),
    h("div", { class: "columns" }, section("Result", box.result), section("Arguments", box.args)),
    section("Attempts and failures", box.attempts),
    section("Tree", box.tree));

  let traceUrl = "";
  let traceId = "";
  const showTrace = () => {
    if (traceUrl && traceId && !box.trace.firstChild) replace(box.trace, traceLink(traceUrl, traceId));
  };
  config().then((c) => { traceUrl = c.traceUrl || ""; showTrace(); }).catch(() => {});

  async function load() {
    try {
      const { task } = await call("TaskService", "GetTask", { id });
      // The record names its trace: every traced task links to it, logged or not.
      traceId ||= task.traceId || "";
      showTrace();
      replace(title, `${task.name} `, badge(task.state));
      const final = FINAL.has(stateName(task.state));
      replace(actions,
        final ? "" : actionButton("Cancel task", page, () => cancelTask(id),
          { done: (r) => (r.cancelled ? `cancelled (${enumName(r.step, "CANCEL_STEP_")})` : "cancel requested"), after: load }),
        // RetryTasks retries failures only: a cancelled task never runs again.
        stateName(task.state) === "FAILURE"
          ? actionButton("Retry task", page, () => retryTasks({ ids: [id] }),
            { done: (r) => retried(r, "the task is no longer FAILURE (only failed tasks are retried)"), after: load })
          : "");
      replace(box.facts, facts(task));
      replace(box.args, h("h3", {}, "args"), json(task.args || []), h("h3", {}, "kwargs"), json(task.kwargs || {}));
      replace(box.result, outcome(task));
      replace(box.attempts, attempts(task));
      replace(box.progress, progress(task));
      const [explained, family] = await Promise.all([
        final ? {} : call("TaskService", "ExplainTask", { id }), call("TaskService", "GetTaskTree", { id })]);
      showExplained(explained);
      replace(box.tree, tree(family, id));
      queued = stateName(task.state) === "QUEUED";
    } catch (err) {
      replace(box.facts, page.fail(err));
    }
  }

  let queued = false;
  function showExplained(explained) {
    replace(box.explain, explained.message || "");
    replace(box.gate, gate(explained));
  }
  // Only while queued: the gate is the scheduler's, and moves without an event of this task.
  const explainTimer = setInterval(async () => {
    if (!queued) return;
    try {
      showExplained(await call("TaskService", "ExplainTask", { id }));
    } catch {
      // The next load says what failed; an explanation left as it was is not wrong for long.
    }
  }, EXPLAIN_MS);

  let pending = null;
  const soon = () => { pending ||= setTimeout(() => { pending = null; load(); }, 150); };
  let wasLive = false;
  const events = open(`/api/events?kinds=EVENT_KIND_TASK&task_ids=${encodeURIComponent(id)}`, {
    // Live again after a break: the record is read afresh, whatever the stream replays
    // (nothing, when its cursor had expired).
    onState(s) {
      page.live(s);
      if (s === "live" && wasLive) soon();
      wasLive ||= s === "live";
    },
    onError: (err) => page.fail(err),
    onMessage: (kind) => kind === "event" && soon(),
  });
  const logStream = open(`/api/tasks/${encodeURIComponent(id)}/logs`, {
    onState: (s) => replace(logState, s === "ended" ? "complete" : s),
    onError: (err) => replace(logState, `${err.code}: ${err.message}`),
    onEnd: soon,
    onMessage(kind, data) {
      if (kind !== "logs") return;
      const follow = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      for (const line of data.logs || []) logs.append(logLine(line));
      while (logs.childElementCount > MAX_LOG_LINES) logs.firstElementChild.remove();
      if (follow) logs.scrollTop = logs.scrollHeight;
    },
  });
  load();
  return () => {
    events.close();
    logStream.close();
    clearTimeout(pending);
    clearInterval(explainTimer);
  };
}
