// A hand-made SVG chart: throughput bars and a latency line over the last minutes.

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// buckets: [{count, latency (s) or null}], oldest first, each bucketSeconds long.
export function chart(buckets, { bucketSeconds, width = 640, height = 180 }) {
  const pad = { left: 44, right: 48, top: 12, bottom: 24 };
  const w = width - pad.left - pad.right;
  const hgt = height - pad.top - pad.bottom;
  const maxRate = Math.max(1, ...buckets.map((b) => b.count / bucketSeconds));
  const maxLatency = Math.max(0.001, ...buckets.map((b) => b.latency || 0));
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
    "aria-label": `Throughput up to ${maxRate.toFixed(1)} tasks/s and latency up to ` +
      `${(maxLatency * 1000).toFixed(0)} ms over the last ${(buckets.length * bucketSeconds) / 60} minutes`,
  });
  const step = w / buckets.length;
  buckets.forEach((b, i) => {
    const rate = b.count / bucketSeconds;
    const barH = (rate / maxRate) * hgt;
    root.append(svg("rect", {
      x: pad.left + i * step + 1, y: pad.top + hgt - barH, width: Math.max(1, step - 2), height: barH,
      class: b.count ? "bar filled" : "bar",
    }));
  });
  const points = buckets.map((b, i) => (b.latency == null ? null
    : `${pad.left + i * step + step / 2},${pad.top + hgt - (b.latency / maxLatency) * hgt}`));
  const runs = points.join(" ").split(/\s*null\s*/).filter(Boolean);
  for (const run of runs) root.append(svg("polyline", { points: run, class: "line" }));
  for (const point of points.filter(Boolean)) {
    const [cx, cy] = point.split(",");
    root.append(svg("circle", { cx, cy, r: 3, class: "dot" }));
  }
  root.append(svg("line", { x1: pad.left, y1: pad.top + hgt, x2: pad.left + w, y2: pad.top + hgt, class: "axis" }));
  root.append(svg("text", { x: pad.left - 6, y: pad.top + 10, class: "label bar-label", "text-anchor": "end" },
    `${maxRate.toFixed(1)}/s`));
  root.append(svg("text", { x: pad.left + w + 6, y: pad.top + 10, class: "label line-label" },
    `${(maxLatency * 1000).toFixed(0)} ms`));
  root.append(svg("text", { x: pad.left, y: height - 6, class: "label" },
    `-${(buckets.length * bucketSeconds) / 60} min`));
  root.append(svg("text", { x: pad.left + w, y: height - 6, class: "label", "text-anchor": "end" }, "now"));
  return root;
}
