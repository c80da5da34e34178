// Small helpers: build elements, format values the API returns (its JSON mapping).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    // Through the CSSOM: the CSP (style-src 'self') refuses style attributes.
    else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export const STATES = ["PENDING", "QUEUED", "SCHEDULED", "ASSIGNED", "RUNNING",
  "SUCCESS", "FAILURE", "RETRYING", "CANCELLED"];
export const FINAL = new Set(["SUCCESS", "FAILURE", "CANCELLED"]);

export function stateName(value) {
  return String(value || "TASK_STATE_UNSPECIFIED").replace("TASK_STATE_", "");
}

export function badge(state) {
  const name = stateName(state);
  return h("span", { class: `badge state-${name.toLowerCase()}`, "data-state": name }, name);
}

export function enumName(value, prefix) {
  return String(value || "").replace(prefix, "").toLowerCase() || "-";
}

// Times in UTC, 24-hour, the zone said ("2026-12-01 10:42:57 UTC"), as the CLI prints
// them: a browser's locale clock would say AM/PM in a zone nobody sees.
export function utc(value) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

// The time of day only, to the millisecond ("10:42:57.283 UTC"), for log lines.
export function clock(value) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return `${d.toISOString().slice(11, 23)} UTC`;
}

export function time(value) {
  if (!value) return "-";
  return h("time", { datetime: value, title: value }, utc(value));
}

export function ago(value) {
  if (!value) return "-";
  const seconds = (Date.now() - new Date(value).getTime()) / 1000;
  const text = seconds < 0 ? `in ${duration(-seconds)}` : `${duration(seconds)} ago`;
  return h("time", { datetime: value, title: utc(value) }, text);
}

export function duration(seconds) {
  if (seconds === undefined || seconds === null || Number.isNaN(seconds)) return "-";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// "1.500s" (a google.protobuf.Duration) -> seconds.
export function seconds(protoDuration) {
  return protoDuration ? parseFloat(protoDuration) : undefined;
}

export function bytes(n) {
  const value = Number(n || 0);
  if (value < 1024 * 1024) return `${Math.round(value / 1024)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

export function json(value) {
  if (value === undefined) return h("pre", { class: "json" }, "-");
  const compact = JSON.stringify(value);
  return h("pre", { class: "json" }, compact.length <= 100 ? compact : JSON.stringify(value, null, 2));
}

export function taskLink(id, text) {
  return h("a", { href: `#/tasks/${encodeURIComponent(id)}` }, text || id);
}

export function section(title, ...children) {
  const id = `s-${title.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), ...children);
}
