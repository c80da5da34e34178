// Tasks: ListTasks with filters and paging; the page is fetched again when a
// pulse names one of its tasks, or (on the first page) a task its filters match.

import { call, named } from "../api.js";
import { ago, badge, h, replace, STATES, taskLink } from "../dom.js";
import { coalesce, follow } from "../pulse.js";
import { actionButton, retried, retryTasks } from "./actions.js";

const PAGE_SIZE = 50;
const SINCE = [["", "any time"], ["5", "last 5 min"], ["60", "last hour"], ["1440", "last 24 h"]];

function row(task) {
  return h("tr", { "data-task-id": task.id },
    h("td", {}, taskLink(task.id, task.name)),
    h("td", { class: "mono" }, task.id.slice(0, 13)),
    h("td", {}, named(task, task.queue || "default")),
    h("td", { "data-cell": "state" }, badge(task.state)),
    h("td", { class: "num", "data-cell": "attempt" }, task.attempt || 0),
    h("td", {}, ago(task.createdAt)),
    h("td", { "data-cell": "finished" }, ago(task.finishedAt)));
}

function filterForm(params) {
  const select = (name, label, options) => [
    h("label", { for: `f-${name}` }, label),
    h("select", { id: `f-${name}`, name }, options.map(([value, text]) =>
      h("option", { value, selected: params.get(name) === value || undefined }, text)))];
  const input = (name, label) => [
    h("label", { for: `f-${name}` }, label),
    h("input", { id: `f-${name}`, name, value: params.get(name) || "", size: 14, type: "search" })];
  return h("form", { class: "filters", role: "search", id: "task-filters",
    onsubmit(event) {
      event.preventDefault();
      const data = new URLSearchParams();
      for (const [k, v] of new FormData(event.target)) if (v) data.set(k, v);
      location.hash = `#/tasks?${data}`;
    } },
  select("state", "State", [["", "any"], ...STATES.map((s) => [s, s.toLowerCase()])]),
  input("queue", "Queue"), input("name", "Name"),
  select("since", "Created", SINCE),
  h("button", { type: "submit" }, "Search"));
}

export function render(main, params, page) {
  const state = params.get("state") || "";
  const queue = params.get("queue") || "";
  const name = params.get("name") || "";
  const since = Number(params.get("since") || 0);
  const pageToken = params.get("page") || "";
  const body = h("tbody", {});
  const pager = h("nav", { class: "pager", "aria-label": "Pages of tasks" });
  const retry = state === "FAILURE"
    ? actionButton("Retry these failed tasks", page, () => retryTasks({ queue, name }),
      { done: (r) => retried(r, "no failed task matches these filters"), after: () => reload() })
    : "";
  replace(main, h("h1", {}, "Tasks"), filterForm(params), retry,
    h("table", { class: "grid", id: "tasks" },
      h("thead", {}, h("tr", {}, ["task", "id", "queue", "state", "attempt", "created", "finished"]
        .map((c) => h("th", { scope: "col" }, c)))), body),
    pager);

  const cutoff = since ? Date.now() - since * 60000 : 0;
  const recent = (t) => !cutoff || new Date(t.createdAt).getTime() >= cutoff;

  async function load() {
    try {
      const reply = await call("TaskService", "ListTasks", {
        states: state ? [`TASK_STATE_${state}`] : [], queue, name, pageSize: PAGE_SIZE, pageToken });
      const tasks = (reply.tasks || []).filter(recent);
      replace(body, tasks.length ? tasks.map(row) : h("tr", {}, h("td", { colspan: 7 }, "no tasks")));
      const links = [];
      if (pageToken) links.push(h("a", { href: `#/tasks?${withParam(params, "page", "")}` }, "First page"));
      const older = reply.tasks && reply.tasks.length && !recent(reply.tasks[reply.tasks.length - 1]);
      if (reply.nextPageToken && !older) {
        links.push(h("a", { href: `#/tasks?${withParam(params, "page", reply.nextPageToken)}`, rel: "next" }, "Next page"));
      }
      replace(pager, links);
    } catch (err) {
      replace(body, h("tr", {}, h("td", { colspan: 7 }, page.fail(err))));
    }
  }

  const reload = coalesce(load);
  const matches = ([q, n, st]) => (!queue || q === queue) && (!name || n === name) && (!state || st === state);
  // A pulse touches this page when it names a task shown, or, on the first page, a
  // task of its queue and name entering a state it lists (a new one among them).
  function touches(tasks) {
    if (tasks.more) return true;
    if (tasks.ids.some((id) => body.querySelector(`tr[data-task-id="${CSS.escape(id)}"]`))) return true;
    return !pageToken && tasks.entered.some(matches);
  }
  const stream = follow(page, {
    onResync: reload,
    onPulse: (pulse) => pulse.tasks && touches(pulse.tasks) && reload(),
  });
  reload();
  return () => stream.close();
}

function withParam(params, key, value) {
  const copy = new URLSearchParams(params);
  if (value) copy.set(key, value);
  else copy.delete(key);
  return copy;
}
