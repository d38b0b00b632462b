// memscope's recording format (docs/recording-format.md), read in the page:
// the one reader of recordings there, for a file dropped on the page and for
// the file `memscope live --input FILE` serves (api/recording) alike: both
// become the same columns, frames, events and process tables, shown as a
// live run's stream is. Catalog metrics are not recomputed here (that takes
// the catalog and the recorded host): `live --input` streams them alone.
"use strict";

const MemscopeRecording = (() => {
  const FORMAT = "memscope-recording";
  const VERSION = 5;
  const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

  class RecordingError extends Error {}

  function fail(name, line, what) {
    throw new RecordingError(`${name}:${line}: ${what}`);
  }

  // Bytes (Uint8Array) to text: one zstd stream when it starts with zstd's
  // magic, whatever the file's name.
  function toText(bytes) {
    if (ZSTD_MAGIC.every((b, i) => bytes[i] === b)) {
      bytes = fzstd.decompress(bytes);
    }
    return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  }

  function isTask(s) {
    return s.pid !== undefined || s.tid !== undefined;
  }

  function seriesFrom(entry, name, line) {
    if (typeof entry !== "object" || entry === null || typeof entry.name !== "string") {
      fail(name, line, "a series entry needs a name");
    }
    if (entry.kind !== "counter" && entry.kind !== "gauge") {
      fail(name, line, `series '${entry.name}': kind is '${entry.kind}', expected counter or gauge`);
    }
    return {
      name: entry.name, kind: entry.kind, unit: entry.unit || "",
      scale: typeof entry.scale === "number" ? entry.scale : 1,
      cpu: entry.cpu, node: entry.node, socket: entry.socket, pid: entry.pid, tid: entry.tid,
      comm: entry.comm || "", unavailable: entry.unavailable, retired: !!entry.retired,
    };
  }

  // The whole file: { session, batches } as /api/session and the stream give.
  function parse(text, name = "recording") {
    const lines = text.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    if (!lines.length) fail(name, 1, "the file is empty: not a memscope recording");
    let header;
    try {
      header = JSON.parse(lines[0]);
    } catch (e) {
      fail(name, 1, "the first line is not JSON: not a memscope recording (memscope record writes them)");
    }
    if (header.format !== FORMAT) fail(name, 1, `format is '${header.format}', expected '${FORMAT}'`);
    if (!Number.isInteger(header.version) || header.version < 1) fail(name, 1, "version must be an integer >= 1");
    if (header.version > VERSION) {
      fail(name, 1, `format version ${header.version} is newer than this page reads (${VERSION}): use a newer memscope`);
    }
    if (!Array.isArray(header.series)) fail(name, 1, "the header has no series table");
    const table = header.series.map((s) => seriesFrom(s, name, 1));

    // Columns: every event (not per process) summed per node, as live does.
    const columns = [];
    const members = [];
    const na = [];
    table.forEach((s, i) => {
      if (s.unavailable) { na.push({ name: s.name, why: s.unavailable }); return; }
      if (isTask(s) || s.retired) return;
      const label = s.node !== undefined ? `node ${s.node}` : "all";
      let c = columns.findIndex((col) => col.group === s.name && col.label === label);
      if (c < 0) {
        columns.push({ group: s.name, label, unit: s.unit, kind: s.kind, source: "event",
                       scope: s.node !== undefined ? "node" : "system" });
        members.push([]);
        c = columns.length - 1;
      }
      members[c].push(i);
    });

    const batches = [];
    let frames = [], events = [];
    let seq = 0, lastT = 0, lastTns = 0, frameCount = 0, ended = null;
    let procSince = null, procSums = new Map();
    // Series of a "brief" record (version 5): a process's whole life in the
    // next frame, with its one value; not in the table (no place in "v").
    let brief = [], briefCount = 0;
    const intervalMs = Math.round((header.interval_ns || 0) / 1e6);

    const flushProcs = (now) => {
      const names = [];
      const rows = new Map();
      // By series, not by index: a retired index may hold another process's
      // series later in the same period. A process that exec'd has two series
      // (old and new name) in that period: one row, their counts added.
      for (const [s, v] of procSums) {
        if (s.pid === undefined || s.tid !== undefined) continue;
        const key = s.node !== undefined ? `${s.name}@node${s.node}` : s.name;
        let k = names.indexOf(key);
        if (k < 0) { names.push(key); k = names.length - 1; }
        if (!rows.has(s.pid)) rows.set(s.pid, { pid: s.pid, comm: s.comm, v: [] });
        const row = rows.get(s.pid);
        row.comm = s.comm;
        row.v[k] = s.kind === "counter" && row.v[k] !== undefined ? row.v[k] + v : v;
      }
      const r = [...rows.values()]
        .sort((a, b) => (b.v[0] || 0) - (a.v[0] || 0) || a.pid - b.pid)
        .slice(0, 30)
        .map((row) => [row.pid, row.comm, ...names.map((_, k) => (row.v[k] === undefined ? null : row.v[k]))]);
      procSums = new Map();
      const p = { d: now - procSince, all: rows.size, n: names, r };
      procSince = now;
      return p;
    };
    const flush = (force, end) => {
      if (!frames.length && !events.length && !end) return;
      const b = { f: frames, e: events.length ? events : undefined };
      if (procSince !== null && (force || lastT - procSince >= 1000)) b.p = flushProcs(lastT);
      if (end) b.end = end;
      batches.push(b);
      frames = [];
      events = [];
    };

    for (let n = 1; n < lines.length; n++) {
      const line = n + 1;
      if (!lines[n].trim()) continue;
      let r;
      try {
        r = JSON.parse(lines[n]);
      } catch (e) {
        if (n === lines.length - 1) {
          // A cut last line: the writer was killed mid-frame (format: "Crashes").
          na.push({ name: "end of file", why: `${name}:${line}: the recording ends in the middle of a record: it was cut; ${frameCount} frames read` });
          break;
        }
        fail(name, line, "not JSON");
      }
      if (Array.isArray(r.v)) {
        if (typeof r.t !== "number" || typeof r.d !== "number") fail(name, line, "a frame needs t and d (ns)");
        if (r.t < lastTns) fail(name, line, "t decreases");
        lastTns = r.t;
        if (r.v.length > table.length) fail(name, line, `the frame has ${r.v.length} values for ${table.length} series`);
        const running = new Map();
        for (const m of r.m || []) running.set(m[0], m);
        const value = (i) => {
          const v = r.v[i];
          if (v === null || v === undefined) return null;
          const s = table[i];
          let x = v;
          const m = running.get(i);
          if (s.kind === "counter" && m && m[2] > 0) x = v * m[1] / m[2];
          return x * s.scale;
        };
        const t = Math.round(r.t / 1e6);
        if (procSince === null) procSince = Math.round((r.t - r.d) / 1e6);
        const row = [seq++, t, Math.round(r.d / 1e3)];
        for (let c = 0; c < columns.length; c++) {
          let sum = null;
          for (const i of members[c]) {
            const x = value(i);
            if (x !== null) sum = (sum || 0) + x;
          }
          row.push(sum);
        }
        table.forEach((s, i) => {
          if (s.pid === undefined || s.retired) return;
          const x = value(i);
          if (x === null) return;
          procSums.set(s, s.kind === "counter" ? (procSums.get(s) || 0) + x : x);
        });
        for (const [s, v] of brief) procSums.set(s, v * s.scale);
        brief = [];
        frames.push(row);
        frameCount++;
        lastT = t;
        // A batch at most every 500 frames, and with processes every second
        // of the recording, as memscope live --input streams it.
        if (frames.length >= 500 || (procSums.size && lastT - procSince >= 1000)) flush(false);
      } else if (Array.isArray(r.series)) {
        for (const e of r.series) {
          const s = seriesFrom(e, name, line);
          if (!Number.isInteger(e.i) || e.i < 0 || e.i > table.length) fail(name, line, `series index ${e.i} is not the table's next or a retired one`);
          if (e.i < table.length && !table[e.i].retired) fail(name, line, `series index ${e.i} is in use`);
          table[e.i] = s;
        }
      } else if (Array.isArray(r.brief)) {
        if (header.version < 5) fail(name, line, `a "brief" series record in a version ${header.version} recording; they exist from version 5 on`);
        for (const e of r.brief) {
          // A brief entry leaves the kind out for a counter.
          const s = seriesFrom({ kind: "counter", ...e }, name, line);
          if (s.pid === undefined && s.tid === undefined) fail(name, line, `brief series '${s.name}' has no pid or tid`);
          if (!Number.isInteger(e.v) || e.v < 0) fail(name, line, `brief series '${s.name}': v must be a non-negative integer`);
          brief.push([s, e.v]);
          briefCount++;
        }
      } else if (Array.isArray(r.retire)) {
        for (const i of r.retire) {
          if (!table[i]) fail(name, line, `retire names index ${i}, which the table does not have`);
          table[i].retired = true;
        }
      } else if (typeof r.label === "string") {
        const k = r.phase === "begin" ? "begin" : r.phase === "end" ? "end" : "label";
        events.push({ t: Math.round(r.t / 1e6), k, x: r.label });
      } else if (typeof r.control === "string") {
        const e = { t: Math.round(r.t / 1e6), k: r.control };
        if (r.control === "interval") e.x = Math.round(r.interval_ns / 1e6);
        events.push(e);
      } else if (typeof r.end === "string") {
        if (Number.isInteger(r.frames) && r.frames !== frameCount) {
          fail(name, line, `the end record counts ${r.frames} frames, the file holds ${frameCount}`);
        }
        if (Number.isInteger(r.brief_series) && r.brief_series !== briefCount) {
          fail(name, line, `the end record counts ${r.brief_series} brief series, the file holds ${briefCount}`);
        }
        ended = r.end;
      } else if (["s", "map", "comm", "fork", "exit", "lost", "maps_unreadable", "alloc", "free", "damon"].some((k) => k in r)) {
        // Samples and what attributes them (record --sample): memscope report reads them; the
        // page charts the frames.
      } else {
        fail(name, line, "not a frame, series, brief, retire, label, control, sample or end record");
      }
    }
    flush(true, ended || "end of the file (no end record)");

    const startMs = header.start && typeof header.start.unix_ns === "number" ? header.start.unix_ns / 1e6 : 0;
    const host = header.host || {};
    const nodes = Array.isArray(host.nodes) ? host.nodes.length : undefined;
    const sockets = Array.isArray(host.cpus) ? new Set(host.cpus.map((c) => c[3])).size : undefined;
    return {
      session: {
        title: header.target || name, origin: "file", origin_name: name, from_file: true,
        start_unix_ms: startMs, interval_ms: intervalMs, paused: false, ended: true, end_reason: ended || "",
        control: false, token: false, columns, na,
        host: { hostname: host.hostname, kernel: host.kernel, cpus: Array.isArray(host.cpus) ? host.cpus.length : undefined, nodes, sockets },
        note: "catalog metrics are recomputed by memscope live --input FILE",
      },
      batches,
    };
  }

  return { parse, toText, RecordingError };
})();

if (typeof module !== "undefined") module.exports = MemscopeRecording;
