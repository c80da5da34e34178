// Schedules: next and last run, times run; pause, resume, trigger. Reloaded when
// a pulse says schedules changed, and every few seconds (next-run times move on their own).

import { call, named } from "../api.js";
import { ago, duration, h, replace, seconds, taskLink } from "../dom.js";
import { coalesce, follow } from "../pulse.js";
import { actionButton } from "./actions.js";

const PAGE_SIZE = 100;
const REFRESH_MS = 10000;

function every(s) {
  return s.cron ? `cron ${s.cron}${s.timeZone ? ` (${s.timeZone})` : ""}` : `every ${duration(seconds(s.interval))}`;
}

function row(s, page, reload) {
  const act = (label, method, done) => actionButton(label, page,
    () => call("ScheduleService", method, { id: s.id }),
    { done: typeof done === "function" ? done : `${s.name}: ${done}`, after: reload, "aria-label": `${label} ${s.name}` });
  return h("tr", { "data-schedule": s.name },
    h("th", { scope: "row" }, named(s, s.name), s.paused ? h("span", { class: "badge paused" }, "paused") : ""),
    h("td", {}, s.task ? s.task.name : "-"),
    h("td", {}, every(s)),
    h("td", {}, s.paused ? "-" : ago(s.nextRunAt)),
    h("td", {}, ago(s.lastRunAt)),
    h("td", { class: "num" }, s.timesRun || "0"),
    h("td", {}, s.lastTaskId ? taskLink(s.lastTaskId, s.lastTaskId.slice(0, 13)) : "-"),
    h("td", { class: "actions" },
      s.paused ? act("Resume", "ResumeSchedule", "resumed") : act("Pause", "PauseSchedule", "paused"),
      act("Trigger", "TriggerSchedule", (r) => `${s.name}: triggered task ${r.task ? r.task.id : ""}`)));
}

export function render(main, _params, page) {
  const body = h("tbody", {}, h("tr", {}, h("td", { colspan: 8 }, "loading")));
  replace(main, h("h1", {}, "Schedules"),
    h("table", { class: "grid", id: "schedules" },
      h("thead", {}, h("tr", {}, ["schedule", "task", "runs", "next run", "last run", "times run", "last task", "actions"]
        .map((c) => h("th", { scope: "col" }, c)))), body));

  async function load() {
    try {
      const all = [];
      let pageToken = "";
      do {
        const reply = await call("ScheduleService", "ListSchedules", { pageSize: PAGE_SIZE, pageToken });
        all.push(...(reply.schedules || []));
        pageToken = reply.nextPageToken || "";
      } while (pageToken);
      replace(body, all.length ? all.map((s) => row(s, page, load)) : h("tr", {}, h("td", { colspan: 8 }, "no schedules")));
    } catch (err) {
      replace(body, h("tr", {}, h("td", { colspan: 8 }, page.fail(err))));
    }
  }
  const reload = coalesce(load);
  const stream = follow(page, {
    onResync: reload,
    onPulse: (pulse) => pulse.changed && pulse.changed.schedules && reload(),
  });
  reload();
  const timer = setInterval(reload, REFRESH_MS);
  return () => {
    stream.close();
    clearInterval(timer);
  };
}
