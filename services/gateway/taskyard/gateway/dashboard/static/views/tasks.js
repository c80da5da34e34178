// Tasks: ListTasks with filters and paging; new tasks and state changes appear
// live from the event stream (filtered by the page's queue and name).

import { call } from "../api.js";
import { ago, badge, h, replace, STATES, stateName, taskLink } from "../dom.js";
import { open } from "../sse.js";
import { actionButton, retryTasks } from "./actions.js";

const PAGE_SIZE = 50;
const SINCE = [["", "any time"], ["5", "last 5 min"], ["60", "last hour"], ["1440", "last 24 h"]];

function row(task) {
  return h("tr", { "data-task-id": task.id },
    h("td", {}, taskLink(task.id, task.name)),
    h("td", { class: "mono" }, task.id.slice(0, 13)),
    h("td", {}, task.queue || "default"),
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
      { done: (r) => `${(r.ids || []).length} task(s) retried`, after: () => load() })
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

  function onEvent(event) {
    const current = body.querySelector(`tr[data-task-id="${CSS.escape(event.taskId)}"]`);
    const task = { id: event.taskId, name: event.taskName, queue: event.queue, state: event.state,
      attempt: event.attempt, createdAt: event.time };
    if (current) {
      replace(current.querySelector('[data-cell="state"]'), badge(event.state));
      replace(current.querySelector('[data-cell="attempt"]'), event.attempt || 0);
      if (["SUCCESS", "FAILURE", "CANCELLED"].includes(stateName(event.state))) {
        replace(current.querySelector('[data-cell="finished"]'), ago(event.time));
      }
      return;
    }
    if (pageToken || (state && stateName(event.state) !== state)) return;
    const empty = body.querySelector("td[colspan]");
    if (empty) empty.parentElement.remove();
    body.prepend(row(task));
  }

  const filters = new URLSearchParams({ kinds: "EVENT_KIND_TASK" });
  if (queue) filters.append("queues", queue);
  if (name) filters.append("task_names", name);
  const stream = open(`/api/events?${filters}`, {
    onState: page.live,
    onError: (err) => page.fail(err),
    onMessage: (kind, event) => kind === "event" && onEvent(event),
  });
  load();
  return () => stream.close();
}

function withParam(params, key, value) {
  const copy = new URLSearchParams(params);
  if (value) copy.set(key, value);
  else copy.delete(key);
  return copy;
}
