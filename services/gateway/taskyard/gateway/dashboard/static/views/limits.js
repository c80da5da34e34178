// Limits: the busiest limits (their kind and numbers, per key or global, the task
// that declares them) and their usage on the leading scheduler (units in use,
// waiting, admitted, throttled, their busiest keys), busiest first. Live from
// /api/limits: the gateway reads the limits and their usage once a second for
// every page open, and sends the busiest (at most 200; the others are counted)
// when they changed. Every name, key and description is put in as text.

import { h, replace, utc } from "../dom.js";
import { open } from "../sse.js";

const COLUMNS = ["limit", "kind", "numbers", "scope", "declared by", "in use", "waiting", "admitted",
  "throttled", "keys", "busiest keys"];

// "1s", "0.100s", "60s" (a google.protobuf.Duration) -> "1 s", "100 ms", "1 min".
export function period(protoDuration) {
  const ms = Math.round(parseFloat(protoDuration || "0") * 1000);
  if (ms < 1000) return `${ms} ms`;
  for (const [size, unit] of [[86400000, "d"], [3600000, "h"], [60000, "min"]]) {
    if (ms % size === 0) return `${ms / size} ${unit}`;
  }
  return `${ms / 1000} s`;
}

function numbers(limit) {
  if (limit.rate) {
    const r = limit.rate;
    return `${r.units} per ${period(r.period)}, burst ${r.burst && r.burst !== "0" ? r.burst : r.units}`;
  }
  if (limit.concurrency) return `at most ${limit.concurrency.maxUnits} at once`;
  if (limit.breaker) {
    // A circuit breaker (docs/flow-control.md): unset numbers are the defaults.
    const b = limit.breaker;
    const probes = b.halfOpenProbes && b.halfOpenProbes !== "0" ? b.halfOpenProbes : 1;
    return `opens at ${b.failureThreshold} failures in ${period(b.window || "60s")}, ` +
      `cool-down ${period(b.coolDown || "30s")}, ${probes} probe(s)`;
  }
  return "-";
}

function declaredBy(limit) {
  if (!limit.taskName) return "-";
  return [h("span", { class: "mono" }, limit.taskName),
    limit.keyArgument ? ` (key: ${limit.keyArgument})` : ""];
}

function busiest(usage) {
  const keys = usage.busiestKeys || [];
  if (!keys.length) return "-";
  return h("ul", { class: "keys" }, keys.map((k) => h("li", { "data-key": k.key || "" },
    h("span", { class: "mono" }, k.key || "(empty key)"),
    `: ${k.unitsInUse || 0} in use, ${k.waiting || 0} waiting`)));
}

function row(limit) {
  const u = limit.usage;
  const count = (name, value) => h("td", { class: "num", "data-cell": name }, u ? value || "0" : "-");
  return h("tr", { "data-limit": limit.name },
    h("th", { scope: "row" }, h("span", { class: "mono" }, limit.name),
      limit.description ? h("div", { class: "meta" }, limit.description) : ""),
    h("td", { "data-cell": "kind" },
      limit.rate ? "rate" : limit.concurrency ? "concurrency" : limit.breaker ? "breaker" : "-"),
    h("td", { "data-cell": "numbers" }, numbers(limit)),
    h("td", { "data-cell": "scope" }, limit.perKey ? "per key" : "global"),
    h("td", { "data-cell": "declared" }, declaredBy(limit)),
    count("in-use", u && u.unitsInUse),
    count("waiting", u && u.waiting),
    count("admitted", u && u.admitted),
    count("throttled", u && u.throttled),
    count("keys", u && u.keys),
    h("td", { "data-cell": "busiest" }, u ? busiest(u) : "-"));
}

function status(data) {
  const parts = [];
  if (!data.store.answered) parts.push(`the store did not answer (${data.store.error}): the limits as last read`);
  if (data.scheduler.answered) parts.push(`usage from the leading scheduler (term ${data.scheduler.term})`);
  else parts.push(`no scheduler answered${data.scheduler.error ? ` (${data.scheduler.error})` : ""}: usage unknown`);
  parts.push(`read at ${utc(data.at * 1000)}`);
  return parts.join(" · ");
}

export function render(main, _params, page) {
  const body = h("tbody", {}, h("tr", {}, h("td", { colspan: COLUMNS.length }, "loading")));
  const state = h("p", { class: "meta", id: "limits-status", role: "status" }, "connecting");
  replace(main, h("h1", {}, "Limits"), state,
    h("table", { class: "grid", id: "limits" },
      h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", { scope: "col" }, c)))), body));

  const stream = open("/api/limits", {
    onState: page.live,
    onError: (err) => replace(state, page.fail(err)),
    onMessage(kind, data) {
      if (kind !== "limits") return;
      replace(state, status(data));
      state.dataset.scheduler = data.scheduler.answered ? "answered" : "silent";
      const limits = data.limits || [];
      replace(body, limits.length ? limits.map(row)
        : h("tr", {}, h("td", { colspan: COLUMNS.length }, "no limits")),
      data.notShown ? h("tr", { id: "limits-not-shown" }, h("td", { colspan: COLUMNS.length },
        `${data.notShown} more ${data.notShown === 1 ? "limit" : "limits"} not shown (busiest first)`)) : "");
    },
  });
  return () => stream.close();
}
