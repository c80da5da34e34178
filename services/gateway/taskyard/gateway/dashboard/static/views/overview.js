// Overview: queue depth by state, throughput and latency from the pulse (the
// gateway's summary of the live events), and the pools with their worker processes.

import { call, named } from "../api.js";
import { chart } from "../chart.js";
import { ago, bytes, duration, h, replace, section, seconds } from "../dom.js";
import { coalesce, follow } from "../pulse.js";
import { actionButton, pauseQueue, resumeQueue, retried, retryTasks } from "./actions.js";

const REFRESH_MS = 5000;

const COUNTS = ["pending", "queued", "scheduled", "assigned", "running", "retrying", "succeeded",
  "failed", "cancelled"];

function queueTable(status, page, refresh) {
  const rows = (status.queues || []).map((q) => [q, named(q, q.name)]).map(([q, name]) => h("tr", { "data-queue": name },
    h("th", { scope: "row" }, name, q.paused ? h("span", { class: "badge paused" }, "paused") : ""),
    COUNTS.map((c) => h("td", { class: "num", "data-count": c }, q[c] || "0")),
    h("td", { class: "num" }, duration(seconds(q.meanDuration))),
    h("td", { class: "actions" },
      q.paused
        ? actionButton("Resume", page, () => resumeQueue(q.name, q.tenant), { done: `queue ${name} resumed`, after: refresh, "aria-label": `Resume queue ${name}` })
        : actionButton("Pause", page, () => pauseQueue(q.name, q.tenant), { done: `queue ${name} paused`, after: refresh, "aria-label": `Pause queue ${name}` }),
      Number(q.failed || 0) > 0
        ? actionButton("Retry failed", page, () => retryTasks({ queue: q.name }, q.tenant),
          { done: (r) => retried(r, `no failed task in ${name}`, ` of ${name}`), after: refresh, "aria-label": `Retry the failed tasks of ${name}` })
        : ""),
  ));
  return h("table", { class: "grid", id: "queues" },
    h("caption", {}, `${status.servers || 0} pool(s), ${status.runningTasks || 0} of ${status.capacity || 0} slots busy`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "queue"),
      COUNTS.map((c) => h("th", { scope: "col", class: "num" }, c)),
      h("th", { scope: "col", class: "num" }, "mean run"), h("th", { scope: "col" }, "actions"))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: COUNTS.length + 3 }, "no tasks yet"))));
}

function queueForm(page, refresh) {
  const input = h("input", { id: "queue-name", name: "queue", placeholder: "default", size: 16 });
  const act = (run, verb) => async (event) => {
    event.preventDefault();
    const queue = input.value.trim() || "default";
    try {
      await run(queue);
      page.notify(`queue ${queue} ${verb}`, "ok");
      refresh();
    } catch (err) {
      page.fail(err);
    }
  };
  return h("form", { class: "inline", id: "queue-form", onsubmit: act(pauseQueue, "paused") },
    h("label", { for: "queue-name" }, "Queue"), input,
    h("button", { type: "submit" }, "Pause queue"),
    h("button", { type: "button", onclick: act(resumeQueue, "resumed") }, "Resume queue"));
}

function serverTable(servers) {
  if (!servers.length) return h("p", {}, "No pool is registered.");
  return servers.map((s) => h("div", { class: "pool" },
    h("h3", {}, `${s.serverName || s.poolId} `, h("span", { class: "badge" }, s.state || (s.isRunning ? "running" : "stopped"))),
    h("p", { class: "meta" }, `pool ${s.poolId} · ${s.runningTasks || 0} of ${s.capacity || 0} slots busy · ` +
      `${(s.workers || []).length} worker(s) × ${s.concurrency || 0} · RSS ${bytes(s.rssBytes)} · heartbeat `, ago(s.lastHeartbeat)),
    h("table", { class: "grid compact" },
      h("thead", {}, h("tr", {}, ["worker", "pid", "state", "slots busy", "RSS", "last beat"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, (s.workers || []).map((w) => h("tr", {},
        h("td", {}, w.index || 0), h("td", {}, w.pid), h("td", {}, w.state),
        h("td", { class: "num" }, `${w.runningTasks || 0} / ${s.concurrency || 0}`), h("td", { class: "num" }, bytes(w.rssBytes)),
        h("td", {}, ago(w.lastBeat)))))),
  ));
}

export function render(main, _params, page) {
  const queues = h("div", {}, "loading");
  const pools = h("div", {}, "loading");
  const chartBox = h("div", { class: "chart-box" });
  const legend = h("p", { class: "meta" }, h("span", { class: "key bar" }), " tasks finished per second  ",
    h("span", { class: "key line" }), " latency (creation to final, median)");
  replace(main, h("h1", {}, "Overview"),
    section("Queues", queues, queueForm(page, () => refreshQueues())),
    section("Throughput and latency", chartBox, legend),
    section("Pools and workers", pools));

  // The chart as the last pulse sent it, and how far the page's clock is ahead of the gateway's.
  let shape = { bucketSeconds: 10, buckets: 30, points: [] };
  let skew = 0;
  function draw() {
    const { bucketSeconds, buckets, points } = shape;
    const last = Math.floor((Date.now() / 1000 - skew) / bucketSeconds) * bucketSeconds;
    const byStart = new Map(points.map(([start, count, ms]) => [start, { count, latency: ms == null ? null : ms / 1000 }]));
    const shown = [];
    for (let i = buckets - 1; i >= 0; i--) shown.push(byStart.get(last - i * bucketSeconds) || { count: 0, latency: null });
    replace(chartBox, chart(shown, { bucketSeconds }));
  }

  const refreshQueues = coalesce(async () => {
    try {
      replace(queues, queueTable(await call("QueueService", "GetQueueStatus"), page, refreshQueues));
    } catch (err) {
      replace(queues, page.fail(err));
    }
  });
  const refreshPools = coalesce(async () => {
    try {
      replace(pools, serverTable((await call("QueueService", "ListServers")).servers || []));
    } catch (err) {
      replace(pools, page.fail(err));
    }
  });
  const refresh = () => Promise.all([refreshQueues(), refreshPools()]);

  const stream = follow(page, {
    onResync: refresh,
    onPulse(pulse) {
      shape = pulse.chart;
      skew = Date.now() / 1000 - pulse.at;
      // At once, not at the next tick: the first pulses bring the last minutes.
      draw();
      if (!pulse.changed) return;
      if (pulse.changed.queues) refreshQueues();
      if (pulse.changed.pools) refreshPools();
    },
  });
  refresh();
  draw();
  // Heartbeats, slots and RSS change without an event.
  const timers = [setInterval(refresh, REFRESH_MS), setInterval(draw, 1000)];
  return () => {
    stream.close();
    timers.forEach(clearInterval);
  };
}
