// memscope live's page: one chart per metric or event (series per node,
// socket, channel), labels on the time axis, the process table, control of
// the run, and recordings dropped on the page. Charts are uPlot's.
"use strict";

(() => {
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#e6550d", "#6b6ecf", "#843c39"];
  const $ = (id) => document.getElementById(id);

  const params = new URLSearchParams(location.search);
  if (params.get("token")) sessionStorage.setItem("memscope_token", params.get("token"));
  const token = sessionStorage.getItem("memscope_token");

  // What the tests (and curious people, in the console) can read.
  const M = window.memscope = {
    session: null, columns: [], charts: [], labels: [], totals: [], last: null, seq: -1, frames: 0,
    batches: 0, gaps: [], state: "connecting", firstDrawMs: null, drawMs: [], procs: null, source: null,
    lastDrawFrames: 0, lastDrawAt: null, axes: {}, yAxes: {}, replies: [],
  };

  let charts = [];          // { key, el, plot, cols, data }
  let follow = true;
  let drawPending = false;
  let source = null;        // EventSource
  let t0 = 0;               // ms added to frame times for the x axis (unix ms, or 0 for a file without a start)

  // Ratios as percentages, other values with SI prefixes.
  function fmt(v, unit, kind) {
    if (v === null || v === undefined || Number.isNaN(v)) return "n/a";
    if (kind === "ratio") return (v * 100).toFixed(1) + " %";
    const a = Math.abs(v);
    const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (const [f, p] of units) if (a >= f) return (v / f).toFixed(a / f >= 100 ? 0 : 2) + " " + p + (unit || "");
    return (a >= 100 ? v.toFixed(0) : v.toPrecision(3)) + (unit ? " " + unit : "");
  }

  // Axis ticks: as many decimals as the step between ticks needs (ticks
  // 2000, 2001, 2002 are "2.000 k", "2.001 k", "2.002 k", not all "2.00 k").
  function fmtTick(v, incr, kind) {
    if (v === null || v === undefined) return "";
    if (kind === "ratio") {
      const pct = v * 100, step = Math.abs(incr * 100);
      const dec = step >= 1 || step === 0 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
      return pct.toFixed(dec) + " %";
    }
    const a = Math.max(Math.abs(v), Math.abs(incr));
    const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]];
    const [f, p] = units.find(([f]) => a >= f) || [1, ""];
    const step = Math.abs(incr) / f;
    const dec = step >= 1 || step === 0 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
    return (v / f).toFixed(dec) + (p ? " " + p : "");
  }

  // Time on the x axis with seconds (milliseconds when ticks are closer than
  // a second), the date on the first tick; the labels each chart drew are
  // kept in memscope.axes for whoever checks them.
  function timeAxis(key) {
    return {
      values: (u, splits, axisIdx, space, incr) => {
        const labels = splits.map((v, i) => {
          if (t0 <= 0) return incr < 1 ? v.toFixed(Math.min(3, Math.ceil(-Math.log10(incr)))) + " s" : v.toFixed(0) + " s";
          const d = new Date(v * 1000);
          const f = incr < 1 ? "{HH}:{mm}:{ss}.{fff}" : "{HH}:{mm}:{ss}";
          return uPlot.fmtDate(i === 0 ? "{YYYY}-{MM}-{DD}\n" + f : f)(d);
        });
        M.axes[key] = { min: u.scales.x.min, max: u.scales.x.max, labels, splits: splits.slice() };
        return labels;
      },
      space: 80,
    };
  }

  // The value axis, its labels kept in memscope.yAxes.
  function valueAxis(key, kind) {
    return {
      size: 70,
      values: (u, vals, i, space, incr) => {
        const labels = vals.map((v) => fmtTick(v, incr, kind));
        M.yAxes[key] = { min: u.scales.y.min, max: u.scales.y.max, labels };
        return labels;
      },
    };
  }

  // The hover time: to the millisecond.
  function timeValue(u, v) {
    if (v === null || v === undefined) return "";
    if (t0 <= 0) return v.toFixed(3) + " s";
    return uPlot.fmtDate("{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}.{fff}")(new Date(v * 1000));
  }

  // Ratios run from 0 to at most 100 %: padding never draws 200 %.
  function yScale(kind) {
    if (kind !== "ratio") return {};
    return { range: (u, min, max) => {
      const hi = max > 0 ? uPlot.rangeNum(0, max, 0.1, true)[1] : 1;
      return [0, max <= 1 ? Math.min(1, hi) : hi];
    } };
  }

  // Counters are charted per second; gauges and ratios as they are.
  function shownUnit(col) {
    if (col.kind !== "counter") return col.unit;
    return col.unit ? col.unit + "/s" : "per second";
  }

  function chartKey(col, cols) {
    if (col.scope === "channel") return col.group + " per channel";
    if (col.source === "metric") {
      const has = (scope) => cols.some((c) => c.group === col.group && c.scope === scope);
      const want = has("node") ? "node" : has("socket") ? "socket" : "system";
      return col.scope === want ? col.group : null;
    }
    return col.group;
  }

  // ---- uPlot plugins: labels on the time axis, wheel zoom, shift-drag pan ----

  function labelsPlugin() {
    return {
      hooks: {
        draw: [(u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.font = `${11 * devicePixelRatio}px system-ui`;
          for (const l of M.labels) {
            const x = u.valToPos((t0 + l.t) / 1000, "x", true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.strokeStyle = l.k === "pause" || l.k === "resume" ? "#c90" : "#36c";
            ctx.setLineDash([4, 3]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.fillStyle = ctx.strokeStyle;
            ctx.fillText(l.x !== undefined ? String(l.x) : l.k, x + 3, u.bbox.top + 12 * devicePixelRatio);
          }
          ctx.restore();
        }],
      },
    };
  }

  function zoomPlugin() {
    return {
      hooks: {
        ready: [(u) => {
          const over = u.over;
          over.addEventListener("wheel", (e) => {
            e.preventDefault();
            const { left } = over.getBoundingClientRect();
            const xv = u.posToVal(e.clientX - left, "x");
            const { min, max } = u.scales.x;
            const f = e.deltaY < 0 ? 0.8 : 1.25;
            follow = false;
            setAllX(xv - (xv - min) * f, xv + (max - xv) * f);
          }, { passive: false });
          over.addEventListener("mousedown", (e) => {
            if (!e.shiftKey) return;
            e.stopPropagation();
            const x0 = e.clientX, { min, max } = u.scales.x, per = (max - min) / u.bbox.width * devicePixelRatio;
            follow = false;
            const move = (m) => setAllX(min - (m.clientX - x0) * per, max - (m.clientX - x0) * per);
            const up = () => { removeEventListener("mousemove", move); removeEventListener("mouseup", up); };
            addEventListener("mousemove", move);
            addEventListener("mouseup", up);
          }, true);
          over.addEventListener("dblclick", () => { follow = true; redrawAll(); });
        }],
        setSelect: [(u) => { if (u.select.width > 0) follow = false; }],
        setScale: [(u, key) => { if (key === "x" && !redrawing && !follow) scheduleDraw(); }],
      },
    };
  }

  let settingX = false;
  function setAllX(min, max) {
    if (settingX) return;
    settingX = true;
    for (const c of charts) c.plot.setScale("x", { min, max });
    settingX = false;
  }

  // ---- Building the charts from the columns ----

  function build(session) {
    M.session = session;
    M.columns = session.columns;
    M.totals = session.columns.map(() => 0);
    M.labels = [];
    M.seq = -1;
    M.frames = 0;
    M.first = null;
    M.axes = {};
    M.yAxes = {};
    t0 = session.start_unix_ms || 0;
    for (const c of charts) c.plot.destroy();
    $("charts").innerHTML = "";
    charts = [];
    procChart = null;
    const byKey = new Map();
    session.columns.forEach((col, i) => {
      const key = chartKey(col, session.columns);
      if (!key) return;
      if (!byKey.has(key)) byKey.set(key, []);
      byKey.get(key).push(i);
    });
    for (const [key, cols] of byKey) {
      const first = session.columns[cols[0]];
      const el = document.createElement("div");
      el.className = "chart";
      el.dataset.key = key;
      el.innerHTML = `<h3></h3>`;
      el.querySelector("h3").textContent = key + " ";
      const unit = document.createElement("span");
      unit.className = "unit";
      unit.textContent = shownUnit(first) ? `(${shownUnit(first)})` : "";
      el.querySelector("h3").appendChild(unit);
      $("charts").appendChild(el);
      const data = [[], ...cols.map(() => [])];
      const opts = {
        width: Math.max(300, el.clientWidth - 12), height: 220,
        scales: { x: { time: t0 > 0 }, y: yScale(first.kind) },
        cursor: { sync: { key: "memscope" }, drag: { x: true, y: false } },
        // Lines 1 px wide: a hairline is many times cheaper to draw (50
        // charts of an hour redraw in ~0.1 s instead of seconds).
        series: [{ label: "time", value: timeValue }, ...cols.map((c, k) => ({
          label: session.columns[c].label, stroke: COLORS[k % COLORS.length], width: 1,
          value: (u, v) => fmt(v, first.kind === "counter" && !first.unit ? "/s" : shownUnit(first), first.kind),
        }))],
        axes: [timeAxis(key), valueAxis(key, first.kind)],
        plugins: [labelsPlugin(), zoomPlugin()],
      };
      const plot = new uPlot(opts, data, el);
      charts.push({ key, el, plot, cols, data });
    }
    M.charts = charts.map((c) => ({ key: c.key, series: c.cols.map((i) => session.columns[i].label) }));
    showFacts(session);
  }

  function showFacts(s) {
    $("title").textContent = s.title || "";
    const h = s.host || {};
    const facts = [];
    if (s.origin && s.origin !== "live") facts.push(`${s.origin}: ${s.origin_name}`);
    if (h.hostname) facts.push(h.hostname);
    if (h.cpu) facts.push(h.cpu);
    if (h.cpus !== undefined) facts.push(`${h.cpus} CPUs, ${h.nodes} nodes, ${h.sockets} sockets`);
    if (h.families && h.families.length) facts.push("PMUs: " + h.families.join(", "));
    if (s.interval_ms) facts.push(`every ${s.interval_ms} ms`);
    if (s.note) facts.push(s.note);
    $("facts").textContent = facts.join(" · ");
    $("na").innerHTML = "";
    for (const n of s.na || []) {
      const li = document.createElement("li");
      li.textContent = `${n.name}: ${n.why}`;
      $("na").appendChild(li);
    }
    $("na-count").textContent = (s.na || []).length;
    $("na-box").hidden = !(s.na || []).length;
    // A recording has nothing to steer or follow: no live-only control stays.
    $("controls").hidden = !(s.control && token) || !!s.from_file;
    for (const el of $("controls").querySelectorAll("input, button, select")) el.disabled = !!s.from_file;
    $("readonly").hidden = !(s.control && !token) || !!s.from_file;
    $("follow").textContent = s.from_file ? "Whole run" : "Follow live";
    $("history").hidden = !!s.from_file;
    if (s.interval_ms) $("interval").value = String(s.interval_ms);
    setState(s.ended ? "ended" : s.paused ? "paused" : "running", s.end_reason);
    showHistory(s.history);
  }

  function showHistory(h) {
    if (!h) { $("history").textContent = ""; return; }
    $("history").textContent = `history ${(h.bytes / 1048576).toFixed(1)} of ${(h.limit / 1048576).toFixed(0)} MiB` +
      (h.evicted ? ` (oldest ${h.evicted} batches dropped)` : "");
  }

  function setState(state, why) {
    M.state = state;
    const el = $("state");
    el.className = "state " + state;
    el.textContent = state === "ended" ? `ended: ${why || ""}` : state;
    $("pause").textContent = state === "paused" ? "Resume" : "Pause";
  }

  // ---- Batches (from the stream or a file) ----

  function addBatch(b) {
    M.batches++;
    for (const row of b.f || []) {
      const [seq, t, dUs] = row;
      const x = (t0 + t) / 1000;
      if (M.first === null) M.first = (t0 + t - dUs / 1000) / 1000;
      const secs = dUs / 1e6;
      for (let c = 0; c < M.columns.length; c++) {
        const v = row[3 + c];
        if (v !== null && M.columns[c].kind === "counter") M.totals[c] += v;
      }
      for (const ch of charts) {
        if (ch.procs) continue;
        ch.data[0].push(x);
        ch.cols.forEach((c, k) => {
          const v = row[3 + c];
          const col = M.columns[c];
          ch.data[k + 1].push(v === null ? null : col.kind === "counter" ? (secs > 0 ? v / secs : null) : v);
        });
      }
      M.last = row;
      M.seq = seq;
      M.frames++;
    }
    for (const e of b.e || []) {
      if (e.k === "pause") setState("paused");
      if (e.k === "resume") setState("running");
      if (e.k === "interval") $("interval").value = String(e.x);
      M.labels.push(e);
    }
    if (b.p) showProcs(b.p);
    if (b.end) setState("ended", b.end);
    scheduleDraw();
  }

  function scheduleDraw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      redrawAll();
    });
  }

  // First index with xs[i] >= x (xs ascending).
  function lowerBound(xs, x) {
    let lo = 0, hi = xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // What a chart draws of [min, max]: every point when they fit in its
  // width, else per pixel column the first and last time with each series'
  // smallest and largest value there - the same picture from a few thousand
  // points instead of an hour's 36,000.
  function view(ch, min, max) {
    const xs = ch.data[0];
    const lo = Math.max(0, lowerBound(xs, min) - 1);
    const hi = Math.min(xs.length, lowerBound(xs, max) + 1);
    const width = Math.max(100, Math.round(ch.plot.bbox.width / devicePixelRatio) || 600);
    if (hi - lo <= 2 * width) return ch.data.map((a) => a.slice(lo, hi));
    const out = ch.data.map(() => []);
    const span = (xs[hi - 1] - xs[lo]) / width || 1;
    let i = lo;
    while (i < hi) {
      const end = Math.min(hi, lowerBound(xs, xs[i] + span));
      const last = Math.max(i, end - 1);
      out[0].push(xs[i], xs[last]);
      for (let k = 1; k < ch.data.length; k++) {
        const ys = ch.data[k];
        let mn = null, mx = null;
        for (let j = i; j <= last; j++) {
          const y = ys[j];
          if (y === null) continue;
          if (mn === null || y < mn) mn = y;
          if (mx === null || y > mx) mx = y;
        }
        out[k].push(mn, mx);
      }
      i = Math.max(end, i + 1);
    }
    return out;
  }

  let redrawing = false;
  function redrawAll() {
    const start = performance.now();
    redrawing = true;
    // Every chart spans the same time: the run's first frame to its last
    // (a chart with few points, as the per-process one, is not stretched
    // around them by its own scale).
    let lo = Infinity, hi = -Infinity;
    for (const c of charts) {
      const xs = c.data[0];
      if (xs.length) { lo = Math.min(lo, xs[0]); hi = Math.max(hi, xs[xs.length - 1]); }
    }
    if (M.first !== null && M.first !== undefined) lo = Math.min(lo, M.first);
    if (hi <= lo) hi = lo + 1;
    for (const c of charts) {
      const xs = c.data[0];
      if (!xs.length) continue;
      if (follow) {
        c.plot.setData(view(c, lo, hi), false);
        c.plot.setScale("x", { min: lo, max: hi });
      } else c.plot.setData(view(c, c.plot.scales.x.min, c.plot.scales.x.max), false);
    }
    redrawing = false;
    const took = performance.now() - start;
    M.drawMs.push(took);
    if (M.drawMs.length > 1000) M.drawMs.shift();
    if (M.firstDrawMs === null && M.frames > 0) M.firstDrawMs = performance.now();
    M.lastDrawFrames = M.frames;
    M.lastDrawAt = performance.now();
  }

  // The busiest processes as series: the table's first counter (faults)
  // per second, one point a second, for up to PROC_SERIES processes (those
  // seen busiest first, kept while they run). A new process among them
  // rebuilds the chart.
  const PROC_SERIES = 8;
  let procChart = null;
  function chartProcs(p) {
    if (!p.n.length || M.last === null) return;
    const x = (t0 + M.last[1]) / 1000;
    const secs = p.d / 1000;
    const key = `${p.n[0]} per process`;
    let ch = procChart;
    const pids = ch ? ch.pids.slice() : [];
    for (const r of p.r) if (pids.length < PROC_SERIES && !pids.includes(r[0])) pids.push(r[0]);
    if (!pids.length) return;
    if (!ch || pids.length !== ch.pids.length) {
      const old = ch;
      const el = old ? old.el : document.createElement("div");
      if (old) old.plot.destroy();
      else {
        el.className = "chart";
        $("charts").appendChild(el);
      }
      el.dataset.key = key;
      el.innerHTML = "<h3></h3>";
      el.querySelector("h3").textContent = `${key} (per second)`;
      const data = [old ? old.data[0] : [], ...pids.map((pid) => {
        const k = old ? old.pids.indexOf(pid) : -1;
        return k >= 0 ? old.data[k + 1] : (old ? old.data[0].map(() => null) : []);
      })];
      const names = old ? old.names : new Map();
      for (const r of p.r) names.set(r[0], `${r[1]} (${r[0]})`);
      const plot = new uPlot({
        width: Math.max(300, el.clientWidth - 12), height: 220,
        scales: { x: { time: t0 > 0 } },
        cursor: { sync: { key: "memscope" }, drag: { x: true, y: false } },
        series: [{ label: "time", value: timeValue }, ...pids.map((pid, k) => ({ label: names.get(pid) || String(pid),
                                               stroke: COLORS[k % COLORS.length],
                                               width: 1, value: (u, v) => fmt(v, "/s", "counter") }))],
        axes: [timeAxis(key), valueAxis(key, "counter")],
        plugins: [labelsPlugin(), zoomPlugin()],
      }, data, el);
      ch = { key, el, plot, cols: [], data, pids, names, procs: true };
      if (old) charts[charts.indexOf(old)] = ch; else charts.push(ch);
      procChart = ch;
      M.charts = charts.map((c) => ({ key: c.key, series: c.procs ? c.pids.map(String) : c.cols.map((i) => M.columns[i].label) }));
    }
    ch.data[0].push(x);
    ch.pids.forEach((pid, k) => {
      const r = p.r.find((row) => row[0] === pid);
      ch.data[k + 1].push(r && r[2] !== null ? r[2] / secs : null);
    });
  }

  function showProcs(p) {
    M.procs = p;
    chartProcs(p);
    const secs = p.d / 1000;
    const head = $("procs").querySelector("thead");
    const body = $("procs").querySelector("tbody");
    head.innerHTML = "";
    body.innerHTML = "";
    const tr = document.createElement("tr");
    for (const h of ["pid", "command", ...p.n.map((n) => n + "/s")]) {
      const th = document.createElement("th");
      th.textContent = h;
      tr.appendChild(th);
    }
    head.appendChild(tr);
    for (const r of p.r) {
      const row = document.createElement("tr");
      r.forEach((v, i) => {
        const td = document.createElement("td");
        td.textContent = i < 2 ? String(v) : fmt(v === null ? null : v / secs, "", "counter");
        row.appendChild(td);
      });
      body.appendChild(row);
    }
    $("procs-note").textContent = p.all > p.r.length ? `(the ${p.r.length} busiest of ${p.all})` : "";
    $("procs-box").hidden = !p.r.length;
  }

  // ---- The live stream ----

  function headers() {
    return token ? { Authorization: "Bearer " + token } : {};
  }

  async function connect() {
    let s;
    for (;;) {
      try {
        const r = await fetch("api/session", { headers: headers() });
        if (r.status === 503) { await new Promise((ok) => setTimeout(ok, 300)); continue; }
        if (!r.ok) { setState("ended", (await r.text()).trim()); return; }
        s = await r.json();
        break;
      } catch (e) {
        setState("ended", "memscope live is not reachable: " + e);
        return;
      }
    }
    if (s.recording) {
      try {
        await openServed(s);
      } catch (e) {
        setState("ended", e.message);
        M.fileError = e.message;
      }
      return;
    }
    build(s);
    M.source = "live";
    source = new EventSource("api/stream");
    source.onmessage = (ev) => addBatch(JSON.parse(ev.data));
    source.addEventListener("gap", (ev) => {
      const g = JSON.parse(ev.data);
      M.gaps.push(g);
      $("history").textContent = `batches ${g.missed[0]}-${g.missed[1]} left the history before this page read them`;
    });
    source.onerror = () => { if (M.state !== "ended") $("state").textContent = "reconnecting…"; };
    source.onopen = () => { if (M.state !== "ended") setState(M.state === "connecting" ? "running" : M.state); };
    setInterval(refreshSession, 5000);
  }

  async function refreshSession() {
    if (M.source !== "live") return;
    try {
      const r = await fetch("api/session", { headers: headers() });
      if (!r.ok) return;
      const s = await r.json();
      showHistory(s.history);
      if (s.ended) setState("ended", s.end_reason);
    } catch (e) { /* the stream's own reconnect says so */ }
  }

  // Each reply is shown with the request it answers, and only while that
  // request is the latest: a slow answer to an earlier one never stands in
  // for the answer to a later one.
  let controlSent = 0;
  async function control(line) {
    const n = ++controlSent;
    const el = $("control-reply");
    el.dataset.request = line;
    el.dataset.pending = "1";
    el.textContent = "…";
    const r = await fetch("api/control", { method: "POST", headers: headers(), body: line });
    const text = (await r.text()).trim();
    M.replies.push({ request: line, status: r.status, text });
    if (n === controlSent) {
      el.textContent = text;
      delete el.dataset.pending;
    }
    return { status: r.status, text };
  }
  M.control = control;
  M.redrawAll = redrawAll;
  // Each chart's data: its time span and its series' values (per second for counters).
  M.data = () => charts.map((c) => ({ key: c.key, x: c.data[0], y: c.data.slice(1) }));

  $("label-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("label-text").value.trim();
    if (text) control("label " + text).then(() => { $("label-text").value = ""; });
  });
  $("pause").addEventListener("click", () => control(M.state === "paused" ? "resume" : "pause"));
  $("interval").addEventListener("change", () => control("interval " + $("interval").value));
  $("record-stop").addEventListener("click", () => control("record stop"));
  $("record-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = $("record-file").value.trim();
    if (f) control("record " + f);
  });
  $("follow").addEventListener("click", () => { follow = true; redrawAll(); });

  // ---- Recordings: served by live --input, or dropped on the page ----
  // Both are read by MemscopeRecording.parse (recording.js), the one reader
  // of the format in the page, into the same columns and batches.

  function showRecording(session, batches, from) {
    if (source) { source.close(); source = null; }
    M.source = from;
    build(session);
    for (const b of batches) addBatch(b);
    follow = true;
    redrawAll();
  }

  // The catalog metrics the server recomputes for the recording it serves
  // (its stream's only columns): each frame's [interval us, values] by its time (ms).
  function streamedMetrics() {
    return new Promise((done, failed) => {
      const byTime = new Map();
      const stream = new EventSource("api/stream");
      stream.onmessage = (ev) => {
        const b = JSON.parse(ev.data);
        for (const row of b.f || []) byTime.set(row[1], [row[2], row.slice(3)]);
        if (b.end) { stream.close(); done(byTime); }
      };
      stream.onerror = () => { stream.close(); failed(new Error("the server's metrics stream broke off")); };
    });
  }

  // live --input FILE: the recording as written (api/recording), read as a
  // dropped file is, plus the server's metric columns matched by frame time.
  async function openServed(s) {
    const r = await fetch("api/recording", { headers: headers() });
    if (!r.ok) throw new Error(`api/recording: ${(await r.text()).trim()}`);
    const name = (s.origin_name || "recording").split("/").pop();
    const rec = MemscopeRecording.parse(MemscopeRecording.toText(new Uint8Array(await r.arrayBuffer())), name);
    const metrics = s.columns.length ? await streamedMetrics() : new Map();
    const none = s.columns.map(() => null);
    // A server frame that took in the frames before it (frames merged on a
    // busy server) counts over its own interval: its counters are spread
    // over the file's frame at that time as the same rate; the others stay null.
    const metricValues = (row) => {
      const m = metrics.get(row[1]);
      if (!m) return none;
      const [dUs, values] = m;
      return values.map((v, k) => (v === null || s.columns[k].kind !== "counter" || dUs === row[2] ? v
                                   : dUs > 0 ? v * row[2] / dUs : null));
    };
    const batches = rec.batches.map((b) => Object.assign({}, b, {
      f: b.f.map((row) => row.concat(metricValues(row))),
    }));
    let frames = 0;
    for (const b of batches) frames += b.f.length;
    const session = Object.assign({}, rec.session, {
      origin: s.origin, origin_name: s.origin_name, token: s.token, frames,
      columns: rec.session.columns.concat(s.columns),
      // Series the recording marks unavailable are in both lists.
      na: (s.na || []).concat(rec.session.na)
        .filter((n, i, all) => all.findIndex((m) => m.name === n.name && m.why === n.why) === i),
      host: Object.assign({}, rec.session.host, s.host), note: undefined,
    });
    showRecording(session, batches, "recording");
  }

  async function openFile(file) {
    $("file-state").textContent = `reading ${file.name}…`;
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const rec = MemscopeRecording.parse(MemscopeRecording.toText(bytes), file.name);
      showRecording(rec.session, rec.batches, "file");
      $("file-state").textContent = `${file.name}: ${M.frames} frames`;
    } catch (e) {
      $("file-state").textContent = e.message;
      M.fileError = e.message;
    }
  }
  M.openFile = openFile;
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer.files.length) openFile(e.dataTransfer.files[0]);
  });
  $("file").addEventListener("change", (e) => { if (e.target.files.length) openFile(e.target.files[0]); });
  addEventListener("resize", () => {
    for (const c of charts) c.plot.setSize({ width: Math.max(300, c.el.clientWidth - 12), height: 220 });
  });

  connect();
})();
