// Hand-written SVG line charts and small formatters for the status pages (no build step, no CDN:
// the pages must work on an air-gapped crawl box). window.scCharts.line(svg, series) draws each
// series as a <path class="series" data-points="N">, so a test can tell a chart has data.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var W = 640, H = 200, L = 52, R = 10, T = 10, B = 24;

  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function num(v) {
    if (!isFinite(v)) return "-";
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(0) + "k";
    if (a >= 100 || v === Math.round(v)) return String(Math.round(v));
    return v.toFixed(1);
  }

  function bytes(v) {
    if (!isFinite(v)) return "-";
    var u = ["B", "KB", "MB", "GB", "TB"], i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + " " + u[i];
  }

  /** series: [{ name, color, points: [[epochMs, value], ...] }] */
  function line(svg, series) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var t0 = Infinity, t1 = -Infinity, vmax = 0;
    series.forEach(function (s) {
      s.points.forEach(function (p) {
        t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); vmax = Math.max(vmax, p[1]);
      });
    });
    if (!isFinite(t0)) { t0 = 0; t1 = 1; }
    if (t1 === t0) t1 = t0 + 1;
    vmax = vmax > 0 ? vmax * 1.1 : 1;
    var x = function (t) { return L + ((t - t0) / (t1 - t0)) * (W - L - R); };
    var y = function (v) { return T + (1 - v / vmax) * (H - T - B); };
    for (var g = 0; g <= 4; g++) {
      var v = (vmax * g) / 4;
      svg.appendChild(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
      svg.appendChild(el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, num(v)));
    }
    var span = Math.round((t1 - t0) / 1000);
    svg.appendChild(el("text", { x: L, y: H - 6, class: "tick" }, "-" + (span >= 120 ? Math.round(span / 60) + " min" : span + " s")));
    svg.appendChild(el("text", { x: W - R, y: H - 6, "text-anchor": "end", class: "tick" }, "now"));
    series.forEach(function (s, i) {
      var d = s.points.map(function (p, j) { return (j ? "L" : "M") + x(p[0]).toFixed(1) + " " + y(p[1]).toFixed(1); }).join(" ");
      svg.appendChild(el("path", { d: d || "M0 0", class: "series", "data-series": s.name, "data-points": s.points.length, stroke: s.color, fill: "none", "stroke-width": 2 }));
      var lx = L + 8 + i * 150;
      svg.appendChild(el("rect", { x: lx, y: T + 2, width: 10, height: 10, fill: s.color }));
      var last = s.points.length ? s.points[s.points.length - 1][1] : NaN;
      svg.appendChild(el("text", { x: lx + 14, y: T + 11, class: "legend" }, s.name + " " + num(last)));
    });
  }

  /** Per-second rates between consecutive cumulative samples: [[t, rate], ...]. */
  function rates(samples, key) {
    var out = [];
    for (var i = 1; i < samples.length; i++) {
      var dt = (samples[i].t - samples[i - 1].t) / 1000;
      if (dt > 0) out.push([samples[i].t, Math.max(0, (samples[i][key] - samples[i - 1][key]) / dt)]);
    }
    return out;
  }

  function values(samples, key) {
    return samples.map(function (s) { return [s.t, s[key]]; });
  }

  function text(tag, content, cls) {
    var e = document.createElement(tag);
    e.textContent = content;
    if (cls) e.className = cls;
    return e;
  }

  /** Replaces a tbody's rows: rows = [[cell, ...], ...]; empty -> one row saying `empty`. */
  function table(tbody, rows, empty, columns) {
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    if (!rows.length) {
      var tr0 = document.createElement("tr");
      var td0 = text("td", empty, "empty");
      td0.colSpan = columns;
      tr0.appendChild(td0);
      tbody.appendChild(tr0);
      return;
    }
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      r.forEach(function (c) { tr.appendChild(text("td", String(c))); });
      tbody.appendChild(tr);
    });
  }

  async function getJson(path) {
    var r = await fetch(path, { cache: "no-store", credentials: "same-origin" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  /** The two charts both pages show: #throughput (rates) and #queues (depths), from history samples. */
  function history(samples) {
    line(document.getElementById("throughput"), [
      { name: "fetched/s", color: "#1b6ac9", points: rates(samples, "fetched") },
      { name: "parsed/s", color: "#2d8a4e", points: rates(samples, "parsed") },
      { name: "failed/s", color: "#a4161a", points: rates(samples, "failed") },
    ]);
    line(document.getElementById("queues"), [
      { name: "frontier", color: "#6b4fbb", points: values(samples, "queued") },
      { name: "in flight", color: "#1b6ac9", points: values(samples, "leases") },
      { name: "parse queue", color: "#b5431c", points: values(samples, "parseQueue") },
    ]);
  }

  /** Calls step() now and every ms after it settles; a failure shows in #error. */
  function poll(step, ms) {
    var err = document.getElementById("error");
    var tick = async function () {
      try {
        await step();
        err.textContent = "";
      } catch (e) {
        err.textContent = "data unavailable: " + e.message;
      }
      setTimeout(tick, ms);
    };
    void tick();
  }

  window.scCharts = { line: line, rates: rates, values: values, num: num, bytes: bytes, table: table, getJson: getJson, history: history, poll: poll };
})();
