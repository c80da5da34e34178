// One redrive (#/redrives/ID): its audit record (who, when, which dead letters, at
// what rate, its note), its progress while the leading scheduler re-queues them
// (read again every half second until it is DONE or CANCELLED), pause, resume and
// cancel, and what became of each task it matched. Also the redrives table of the
// Failures page.

import { call } from "../api.js";
import { ago, h, replace, taskLink, time } from "../dom.js";
import { actionButton } from "./actions.js";

const POLL_MS = 500;
const PAGE_SIZE = 100;
const FINAL = new Set(["DONE", "CANCELLED"]);
export const REDRIVE_COLUMNS = ["redrive", "state", "progress", "dead letters of", "rate", "by", "created", "note"];
const ITEM_COLUMNS = ["task", "outcome", "failed attempt", "new attempt", "at", "detail"];

export function stateOf(r) {
  return String(r.state || "").replace("REDRIVE_STATE_", "") || "UNSPECIFIED";
}

function stateBadge(r) {
  const state = stateOf(r);
  return h("span", { class: `badge redrive-${state.toLowerCase()}`, "data-state": state }, state);
}

// The filter as a person would say it: "group abc, queue q, 3 tasks".
export function filterText(f = {}) {
  const parts = [];
  if (f.all) parts.push("all dead letters");
  if (f.groupId) parts.push(`group ${f.groupId}`);
  if (f.queue) parts.push(`queue ${f.queue}`);
  if (f.name) parts.push(`task ${f.name}`);
  if (f.reason) parts.push(String(f.reason).replace("DEAD_LETTER_REASON_", "").toLowerCase().replace(/_/g, " "));
  if (f.failedAfter) parts.push(`failed from ${f.failedAfter}`);
  if (f.failedBefore) parts.push(`failed before ${f.failedBefore}`);
  for (const [k, v] of Object.entries(f.labels || {})) parts.push(`${k}=${v}`);
  if (f.taskIds && f.taskIds.length) parts.push(`${f.taskIds.length} task id(s)`);
  return parts.join(", ") || "-";
}

function done(r) {
  return Number(r.requeued || 0) + Number(r.skipped || 0);
}

function progressText(r) {
  const skipped = Number(r.skipped || 0);
  return `${r.requeued || 0} of ${r.matched || 0} re-queued${skipped ? `, ${skipped} skipped` : ""}`;
}

export function redriveRow(r) {
  return h("tr", { "data-redrive": r.id },
    h("th", { scope: "row" }, h("a", { href: `#/redrives/${encodeURIComponent(r.id)}`, class: "mono" }, r.id.slice(0, 13))),
    h("td", { "data-cell": "state" }, stateBadge(r)),
    h("td", { "data-cell": "progress" }, progressText(r)),
    h("td", { "data-cell": "filter" }, filterText(r.filter)),
    h("td", { class: "num" }, `${r.rate || 0}/s`),
    h("td", { "data-cell": "by" }, r.createdBy || "-"),
    h("td", {}, ago(r.createdAt)),
    h("td", {}, r.note || ""));
}

function facts(r) {
  const rows = [
    ["id", h("span", { class: "mono" }, r.id)],
    ["state", stateBadge(r)],
    ["dead letters of", r.filter && r.filter.groupId
      ? h("a", { href: `#/failures/${encodeURIComponent(r.filter.groupId)}` }, filterText(r.filter)) : filterText(r.filter)],
    ["rate", `at most ${r.rate || 0} a second`],
    ["by", r.createdBy || "-"],
    ["created", time(r.createdAt)],
    ["finished", time(r.finishedAt)],
    ["matched", r.matched || "0"],
    ["re-queued", r.requeued || "0"],
    ["skipped", r.skipped || "0"],
    ["note", r.note || "-"],
  ];
  return h("dl", { class: "facts", id: "redrive-facts" },
    rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k }, v)]));
}

function itemRow(i) {
  return h("tr", { "data-task-id": i.taskId },
    h("td", {}, taskLink(i.taskId, i.taskId.slice(0, 13))),
    h("td", { "data-cell": "outcome" }, String(i.outcome || "").replace("REDRIVE_OUTCOME_", "") || "-"),
    h("td", { class: "num" }, i.failedAttempt || 0),
    h("td", { class: "num" }, i.newAttempt || "-"),
    h("td", {}, time(i.at)),
    h("td", {}, i.detail || ""));
}

export function render(main, id, page, params) {
  const pageToken = params.get("page") || "";
  const record = h("div", { id: "redrive" }, h("p", {}, "loading"));
  const bar = h("progress", { id: "redrive-progress", max: 1, value: 0, "aria-label": "redrive progress" });
  const said = h("span", { id: "redrive-progress-text", role: "status" }, "");
  const controls = h("div", { class: "toolbar", id: "redrive-controls" });
  const items = h("tbody", {}, h("tr", {}, h("td", { colspan: ITEM_COLUMNS.length }, "loading")));
  const pager = h("nav", { class: "pager", "aria-label": "Pages of the redrive's tasks" });
  replace(main, h("p", {}, h("a", { href: "#/failures" }, "← all failures")),
    h("h1", {}, "Redrive"),
    h("p", {}, bar, " ", said), controls, record,
    h("h2", {}, "Tasks"),
    h("table", { class: "grid", id: "redrive-items" },
      h("thead", {}, h("tr", {}, ITEM_COLUMNS.map((c) => h("th", { scope: "col" }, c)))), items),
    pager);

  let timer = null;
  let shown = "";
  let stopped = false;

  function control(label, method, confirmText) {
    return actionButton(label, page, () => call("FailureService", method, { id }), {
      id: `redrive-${label.toLowerCase()}`,
      confirmText,
      done: (r) => `redrive ${stateOf(r.redrive).toLowerCase()}`,
      after: () => poll(),
    });
  }

  async function loadItems() {
    const reply = await call("FailureService", "ListRedriveItems", { id, pageSize: PAGE_SIZE, pageToken });
    const list = reply.items || [];
    replace(items, list.length ? list.map(itemRow) : h("tr", {}, h("td", { colspan: ITEM_COLUMNS.length }, "no tasks")));
    const here = `#/redrives/${encodeURIComponent(id)}`;
    replace(pager, pageToken ? h("a", { href: here }, "First page") : "",
      reply.nextPageToken ? h("a", { href: `${here}?page=${encodeURIComponent(reply.nextPageToken)}`, rel: "next" }, "Next page") : "");
  }

  async function poll() {
    clearTimeout(timer);
    timer = null;
    try {
      const { redrive } = await call("FailureService", "GetRedrive", { id });
      if (stopped) return;
      const state = stateOf(redrive);
      bar.max = Math.max(1, Number(redrive.matched || 0));
      bar.value = done(redrive);
      replace(said, progressText(redrive));
      said.dataset.state = state;
      replace(record, facts(redrive));
      // The buttons and the items change only with the progress or the state.
      const now = `${state}/${done(redrive)}`;
      if (now !== shown) {
        shown = now;
        replace(controls,
          state === "RUNNING" ? control("Pause", "PauseRedrive") : "",
          state === "PAUSED" ? control("Resume", "ResumeRedrive") : "",
          FINAL.has(state) ? "" : control("Cancel", "CancelRedrive",
            "Cancel this redrive? The tasks it has not re-queued yet stay dead letters."));
        await loadItems();
      }
      if (!FINAL.has(state) && !stopped) timer = setTimeout(poll, POLL_MS);
    } catch (err) {
      replace(record, h("p", {}, page.fail(err)));
      if (!stopped) timer = setTimeout(poll, POLL_MS * 4);
    }
  }
  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
