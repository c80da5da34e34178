// Failures: dead letters (tasks whose failure is final) grouped by cause (queue,
// task name and fingerprint: exception type, masked message, frame), most first,
// and the redrives made of them (#/failures). A group's page (#/failures/GROUP)
// lists its dead letters, then redrives them: a dry run first (how many match, a
// sample), then the redrive itself, confirmed, whose progress is on its own page
// (views/redrives.js). Reloaded when a pulse says tasks changed (at most every few
// seconds). Every string of a task is put in as text.

import { call, named } from "../api.js";
import { ago, h, replace, taskLink, time } from "../dom.js";
import { coalesce, follow } from "../pulse.js";
import { actionButton } from "./actions.js";
import { redriveRow, REDRIVE_COLUMNS } from "./redrives.js";

const PAGE_SIZE = 50;
// A busy suite pulses every half second: the groups are read again at most this often.
const RELOAD_MS = 2000;
const GROUP_COLUMNS = ["task", "queue", "error", "frame", "dead letters", "first seen", "last seen"];
const DEAD_COLUMNS = ["task", "id", "reason", "attempt", "failed", "message", "redriven", "labels"];

export function reasonName(value) {
  return String(value || "").replace("DEAD_LETTER_REASON_", "") || "-";
}

// Reloads when a pulse says tasks changed: at most once per RELOAD_MS, the last call
// not lost. close() ends the stream and a reload still waiting.
function live(page, reload) {
  let last = 0;
  let timer = null;
  const again = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      last = Date.now();
      reload();
    }, Math.max(0, last + RELOAD_MS - Date.now()));
  };
  const stream = follow(page, { onResync: again, onPulse: (pulse) => pulse.tasks && again() });
  return {
    close() {
      stream.close();
      clearTimeout(timer);
    },
  };
}

function groupRow(g) {
  return h("tr", { "data-group": g.groupId },
    h("th", { scope: "row" }, h("a", { href: `#/failures/${encodeURIComponent(g.groupId)}` },
      h("span", { class: "mono" }, g.name || "-"))),
    h("td", {}, named(g, g.queue || "default")),
    h("td", { "data-cell": "error" }, h("strong", {}, g.type || "failure"), g.message ? `: ${g.message}` : ""),
    h("td", { class: "mono", "data-cell": "frame" }, g.frame || "-"),
    h("td", { class: "num", "data-cell": "count" }, g.count || "0"),
    h("td", {}, ago(g.firstSeen)),
    h("td", {}, ago(g.lastSeen)));
}

function table(id, columns, body) {
  return h("table", { class: "grid", id },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))), body);
}

function empty(columns, text) {
  return h("tr", {}, h("td", { colspan: columns.length }, text));
}

async function allPages(method, body, key) {
  const out = [];
  let pageToken = "";
  do {
    const reply = await call("FailureService", method, { ...body, pageSize: 100, pageToken });
    out.push(...(reply[key] || []));
    pageToken = reply.nextPageToken || "";
  } while (pageToken && out.length < 1000);
  return out;
}

// #/failures: every group, then the redrives (newest first).
export function render(main, _params, page) {
  const groups = h("tbody", {}, empty(GROUP_COLUMNS, "loading"));
  const redrives = h("tbody", {}, empty(REDRIVE_COLUMNS, "loading"));
  replace(main, h("h1", {}, "Failures"),
    h("p", { class: "meta" }, "Dead letters: tasks whose failure is final (retries spent, quarantined, or not retryable), "
      + "grouped by queue, task and cause. Open a group to redrive it."),
    table("failure-groups", GROUP_COLUMNS, groups),
    h("h2", { id: "redrives-title" }, "Redrives"),
    table("redrives", REDRIVE_COLUMNS, redrives));

  // Each table on its own: one refused read leaves the other shown.
  async function load() {
    try {
      const found = await allPages("ListFailureGroups", { filter: {} }, "groups");
      replace(groups, found.length ? found.map(groupRow) : empty(GROUP_COLUMNS, "no dead letters"));
    } catch (err) {
      replace(groups, empty(GROUP_COLUMNS, page.fail(err)));
    }
    try {
      const made = await call("FailureService", "ListRedrives", { pageSize: PAGE_SIZE });
      const list = made.redrives || [];
      replace(redrives, list.length ? list.map(redriveRow) : empty(REDRIVE_COLUMNS, "no redrives"));
    } catch (err) {
      replace(redrives, empty(REDRIVE_COLUMNS, page.fail(err)));
    }
  }
  const reload = coalesce(load);
  const stream = live(page, reload);
  reload();
  return () => stream.close();
}

function deadRow(d) {
  const f = d.failure || {};
  const labels = Object.entries(d.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  return h("tr", { "data-task-id": d.taskId },
    h("td", {}, taskLink(d.taskId, d.name)),
    h("td", { class: "mono" }, d.taskId.slice(0, 13)),
    h("td", { "data-cell": "reason" }, reasonName(d.reason).toLowerCase().replace(/_/g, " ")),
    h("td", { class: "num" }, f.attempt || 0),
    h("td", {}, ago(f.failedAt)),
    h("td", { "data-cell": "message" }, f.message || ""),
    h("td", { class: "num", "data-cell": "redrives" }, d.redrives || 0),
    h("td", {}, labels || "-"));
}

function groupFacts(g) {
  const rows = [
    ["group", h("span", { class: "mono" }, g.groupId)],
    ["queue", named(g, g.queue || "default")],
    ["task", h("span", { class: "mono" }, g.name || "-")],
    ["error", g.type || "-"],
    ["message", g.message || "-"],
    ["frame", h("span", { class: "mono" }, g.frame || "-")],
    ["dead letters", g.count || "0"],
    ["first seen", time(g.firstSeen)],
    ["last seen", time(g.lastSeen)],
  ];
  return [h("dl", { class: "facts", id: "group-facts" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k }, v)])),
    g.sampleTraceback ? h("details", {}, h("summary", {}, "traceback of the newest"),
      h("pre", { class: "traceback" }, g.sampleTraceback)) : ""];
}

// The group's own record: ListFailureGroups filters by queue and name, not by group, so
// it is looked up among the groups of its dead letters' queue and name.
async function findGroup(groupId, first) {
  if (!first) return null;
  const groups = await allPages("ListFailureGroups", { filter: { queue: first.queue, name: first.name } }, "groups");
  return groups.find((g) => g.groupId === groupId) || null;
}

// The dry run, then the confirmed redrive: the redrive's page shows its progress.
function redriveForm(groupId, page) {
  const rate = h("input", { id: "redrive-rate", type: "number", min: "0.1", max: "10000", step: "any", value: "50", size: 6 });
  const note = h("input", { id: "redrive-note", type: "text", maxlength: "1024", size: 28, placeholder: "why (kept with the redrive)" });
  const result = h("div", { id: "dry-run", role: "status" });
  const request = (dryRun) => ({ filter: { groupId }, rate: Number(rate.value), dryRun, note: note.value });
  const dry = actionButton("Dry run", page, () => call("FailureService", "Redrive", request(true)), {
    id: "dry-run-button",
    done: (r) => {
      const matched = Number(r.matched || 0);
      return matched ? `dry run: ${matched} dead letter(s) would be redriven` : { text: "dry run: nothing matches", kind: "warn" };
    },
    after: (r) => showDryRun(r),
  });

  function showDryRun(reply) {
    const matched = Number(reply.matched || 0);
    const sample = reply.sample || [];
    const chosen = request(false);
    const go = matched ? actionButton(`Redrive ${matched} at ${chosen.rate}/s`, page,
      () => call("FailureService", "Redrive", chosen), {
        id: "redrive-button",
        confirmText: `Re-queue ${matched} dead letter(s) of this group, at most ${chosen.rate} a second?`,
        done: (r) => `redrive ${r.redrive.id} started: ${r.matched} task(s)`,
        after: (r) => { location.hash = `#/redrives/${encodeURIComponent(r.redrive.id)}`; },
      }) : "";
    replace(result,
      h("p", {}, h("strong", { id: "dry-run-matched", "data-matched": matched }, String(matched)),
        ` dead letter(s) match, to be re-queued at most ${chosen.rate} a second.`),
      sample.length ? h("p", { class: "meta" }, "Sample: ", sample.map((d, i) => [i ? ", " : "", taskLink(d.taskId, d.taskId.slice(0, 13))])) : "",
      go);
  }

  return h("section", { class: "card", "aria-labelledby": "redrive-title" },
    h("h2", { id: "redrive-title" }, "Redrive"),
    h("p", { class: "meta" }, "Each dead letter of the group is re-queued as a new attempt, at most the rate given, "
      + "by the leading scheduler. A dry run says how many first; nothing changes until you confirm."),
    h("div", { class: "inline" },
      h("label", { for: "redrive-rate" }, "Rate (tasks/s)"), rate,
      h("label", { for: "redrive-note" }, "Note"), note, dry),
    result);
}

// #/failures/GROUP: the group, its dead letters (paged), and its redrive.
export function renderGroup(main, groupId, page, params) {
  const pageToken = params.get("page") || "";
  const facts = h("div", { id: "group" }, h("p", {}, "loading"));
  const body = h("tbody", {}, empty(DEAD_COLUMNS, "loading"));
  const pager = h("nav", { class: "pager", "aria-label": "Pages of dead letters" });
  replace(main, h("p", {}, h("a", { href: "#/failures" }, "← all failures")),
    h("h1", {}, "Failure group"), facts,
    redriveForm(groupId, page),
    h("h2", {}, "Dead letters"),
    table("dead-letters", DEAD_COLUMNS, body), pager);

  async function load() {
    try {
      const reply = await call("FailureService", "ListFailures",
        { filter: { groupId }, pageSize: PAGE_SIZE, pageToken });
      const dead = reply.failures || [];
      replace(body, dead.length ? dead.map(deadRow) : empty(DEAD_COLUMNS, "no dead letters in this group now"));
      const here = `#/failures/${encodeURIComponent(groupId)}`;
      replace(pager, pageToken ? h("a", { href: here }, "First page") : "",
        reply.nextPageToken ? h("a", { href: `${here}?page=${encodeURIComponent(reply.nextPageToken)}`, rel: "next" }, "Next page") : "");
      const group = await findGroup(groupId, dead[0]);
      replace(facts, group ? groupFacts(group) : h("p", {}, h("span", { class: "mono" }, groupId),
        ": no dead letters in this group now"));
    } catch (err) {
      replace(body, empty(DEAD_COLUMNS, page.fail(err)));
    }
  }
  const reload = coalesce(load);
  const stream = live(page, reload);
  reload();
  return () => stream.close();
}
