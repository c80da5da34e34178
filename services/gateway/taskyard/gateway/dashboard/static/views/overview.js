// Overview: queue depth by state, throughput and latency from the live events,
// and the pools with their worker processes.

import { call } from "../api.js";
import { chart } from "../chart.js";
import { ago, bytes, duration, FINAL, h, replace, section, seconds, stateName } from "../dom.js";
import { open } from "../sse.js";
import { actionButton, pauseQueue, resumeQueue, retryTasks } from "./actions.js";

const BUCKET_SECONDS = 10;
const BUCKETS = 30; // five minutes
const REFRESH_MS = 5000;
// Tasks whose first event was seen, for the latency of their final one (bounded).
const MAX_TRACKED = 10000;

const COUNTS = ["pending", "queued", "scheduled", "assigned", "running", "retrying", "succeeded",
  "failed", "cancelled"];

function queueTable(status, page, refresh) {
  const rows = (status.queues || []).map((q) => h("tr", { "data-queue": q.name },
    h("th", { scope: "row" }, q.name, q.paused ? h("span", { class: "badge paused" }, "paused") : ""),
    COUNTS.map((c) => h("td", { class: "num", "data-count": c }, q[c] || "0")),
    h("td", { class: "num" }, duration(seconds(q.meanDuration))),
    h("td", { class: "actions" },
      q.paused
        ? actionButton("Resume", page, () => resumeQueue(q.name), { done: `queue ${q.name} resumed`, after: refresh, "aria-label": `Resume queue ${q.name}` })
        : actionButton("Pause", page, () => pauseQueue(q.name), { done: `queue ${q.name} paused`, after: refresh, "aria-label": `Pause queue ${q.name}` }),
      Number(q.failed || 0) > 0
        ? actionButton("Retry failed", page, () => retryTasks({ queue: q.name }),
          { done: (r) => `${(r.ids || []).length} task(s) of ${q.name} retried`, after: refresh, "aria-label": `Retry the failed tasks of ${q.name}` })
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
    h("span", { class: "key line" }), " latency (first event seen to final, median)");
  replace(main, h("h1", {}, "Overview"),
    section("Queues", queues, queueForm(page, () => refresh())),
    section("Throughput and latency", chartBox, legend),
    section("Pools and workers", pools));

  const buckets = [];
  const firstSeen = new Map();
  function bucketAt(ms) {
    const start = Math.floor(ms / 1000 / BUCKET_SECONDS) * BUCKET_SECONDS;
    let b = buckets.find((x) => x.start === start);
    if (!b) {
      b = { start, count: 0, latencies: [] };
      buckets.push(b);
      buckets.sort((x, y) => x.start - y.start);
    }
    return b;
  }
  function draw() {
    const now = Math.floor(Date.now() / 1000 / BUCKET_SECONDS) * BUCKET_SECONDS;
    const shown = [];
    for (let i = BUCKETS - 1; i >= 0; i--) {
      const b = buckets.find((x) => x.start === now - i * BUCKET_SECONDS);
      const sorted = b ? [...b.latencies].sort((x, y) => x - y) : [];
      shown.push({ count: b ? b.count : 0, latency: sorted.length ? sorted[Math.floor(sorted.length / 2)] : null });
    }
    while (buckets.length && buckets[0].start < now - BUCKETS * BUCKET_SECONDS) buckets.shift();
    replace(chartBox, chart(shown, { bucketSeconds: BUCKET_SECONDS }));
  }

  let pending = null;
  async function refresh() {
    pending = null;
    try {
      const [status, servers] = await Promise.all([
        call("QueueService", "GetQueueStatus"), call("QueueService", "ListServers")]);
      replace(queues, queueTable(status, page, refresh));
      replace(pools, serverTable(servers.servers || []));
    } catch (err) {
      replace(queues, page.fail(err));
    }
  }
  const soon = () => { pending ||= setTimeout(refresh, 1000); };

  const stream = open("/api/events", {
    onState: page.live,
    onError: (err) => page.fail(err),
    onMessage(kind, event) {
      if (kind !== "event") return;
      soon();
      if (event.kind !== "EVENT_KIND_TASK") return;
      const at = new Date(event.time).getTime();
      if (!firstSeen.has(event.taskId) && firstSeen.size < MAX_TRACKED) firstSeen.set(event.taskId, at);
      if (FINAL.has(stateName(event.state))) {
        const b = bucketAt(at);
        b.count += 1;
        if (firstSeen.has(event.taskId)) b.latencies.push((at - firstSeen.get(event.taskId)) / 1000);
        firstSeen.delete(event.taskId);
      }
    },
  });
  refresh();
  draw();
  const timers = [setInterval(refresh, REFRESH_MS), setInterval(draw, 1000)];
  return () => {
    stream.close();
    timers.forEach(clearInterval);
    clearTimeout(pending);
  };
}
