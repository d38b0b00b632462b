// Drives Debian's Chromium (through playwright-core) against memscope live's
// page, as a person would: waits for charts, labels, pauses and resumes,
// opens a recording, takes a screenshot. Prints what the page showed as JSON.
//
//   node browser.mjs live URL OUTDIR REC a live run (with the token in URL),
//                                        recording to REC from the page
//   node browser.mjs file URL OUTDIR REC a recording opened in the page
//   node browser.mjs load URL OUTDIR     time to first draw of a long history
//   node browser.mjs replay URL OUTDIR REC  a recording served (live --input), then
//                                        the same file opened in the page: each
//                                        chart's time axis and data
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const [scenario, url, outdir, file] = process.argv.slice(2);
const userDir = fs.mkdtempSync(path.join(outdir, "chromium-"));

// A fresh profile each run (playwright passes it as --user-data-dir).
const browser = await chromium.launchPersistentContext(userDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1400, height: 1000 },
  // Axis labels in UTC, so a test can compare them with a recording's start.
  timezoneId: "UTC",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const result = { scenario, console: [] };

// Pixels of each chart drawn in its first series' colour (#1f77b4): the
// line itself, not the axes and grid an empty chart has too.
async function inkedShare(page) {
  return page.evaluate(() => {
    const out = {};
    for (const el of document.querySelectorAll(".chart")) {
      const canvas = el.querySelector("canvas");
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      let line = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i] - 0x1f) < 40 && Math.abs(data[i + 1] - 0x77) < 40 && Math.abs(data[i + 2] - 0xb4) < 40 &&
            data[i + 3] > 100) line++;
      }
      out[el.dataset.key] = line;
    }
    return out;
  });
}

async function framesPerSecond(page, ms) {
  return page.evaluate((ms) => new Promise((done) => {
    let n = 0;
    const start = performance.now();
    const tick = () => {
      n++;
      if (performance.now() - start < ms) requestAnimationFrame(tick);
      else done(n * 1000 / (performance.now() - start));
    };
    requestAnimationFrame(tick);
  }), ms);
}

const snapshot = (page) => page.evaluate(() => ({
  state: memscope.state, seq: memscope.seq, frames: memscope.frames, columns: memscope.columns,
  totals: memscope.totals, last: memscope.last, labels: memscope.labels, charts: memscope.charts,
  procs: memscope.procs, session: memscope.session, fileError: memscope.fileError || null,
  yAxes: memscope.yAxes,
}));

try {
  const page = await browser.newPage();
  page.on("console", (m) => result.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => result.console.push(`pageerror: ${e.message}`));
  const t0 = Date.now();
  await page.goto(url);
  if (scenario === "live") {
    // The reply to this request (the element says which request it answers).
    const replyTo = (line) => page.waitForFunction((line) => {
      const el = document.querySelector("#control-reply");
      return el.dataset.request === line && !el.dataset.pending;
    }, line, { timeout: 30000 });
    await page.waitForFunction(() => window.memscope && memscope.frames >= 10, null, { timeout: 60000 });
    result.first_draw_ms = await page.evaluate(() => memscope.firstDrawMs);
    result.fps_streaming = await framesPerSecond(page, 3000);
    await page.fill("#label-text", "typed in the page");
    await page.click("#label-form button");
    await page.waitForFunction(() => memscope.labels.some((l) => l.x === "typed in the page"), null, { timeout: 30000 });
    await page.click("#pause");
    await page.waitForFunction(() => memscope.state === "paused", null, { timeout: 30000 });
    const paused = await snapshot(page);
    await page.waitForTimeout(1500);
    result.seq_while_paused = [paused.seq, await page.evaluate(() => memscope.seq)];
    await page.click("#pause");
    await page.waitForFunction((s) => memscope.state === "running" && memscope.seq > s + 2, paused.seq, { timeout: 30000 });
    result.resumed_seq = await page.evaluate(() => memscope.seq);
    // The interval from the page's menu: frames come 200 ms apart.
    await page.selectOption("#interval", "200");
    await page.waitForFunction(() => memscope.last && memscope.last[2] >= 180000, null, { timeout: 30000 });
    await replyTo("interval 200");
    result.interval_reply = await page.textContent("#control-reply");
    // A new recording from the page's form (FILE is where).
    if (file) {
      await page.fill("#record-file", file);
      await page.click("#record-form button");
      await replyTo(`record ${file}`);
      result.record_reply = await page.textContent("#control-reply");
      await page.waitForFunction((s) => memscope.seq > s + 5, await page.evaluate(() => memscope.seq),
                                 { timeout: 30000 });
      await page.click("#record-stop");
      await replyTo("record stop");
      result.stop_reply = await page.textContent("#control-reply");
    }
    await page.click("#pause");
    await page.waitForFunction(() => memscope.state === "paused", null, { timeout: 30000 });
    await page.waitForTimeout(800);
    result.final = await snapshot(page);
    result.inked = await inkedShare(page);
    result.na = await page.evaluate(() => [...document.querySelectorAll("#na li")].map((li) => li.textContent));
    result.procs_table = await page.evaluate(() => [...document.querySelectorAll("#procs tbody tr")]
      .map((tr) => [...tr.children].map((td) => td.textContent)));
    await page.screenshot({ path: path.join(outdir, "live.png"), fullPage: true });
  } else if (scenario === "file") {
    await page.waitForFunction(() => window.memscope && memscope.session, null, { timeout: 60000 });
    await page.setInputFiles("#file", file);
    await page.waitForFunction(() => (memscope.source === "file" && memscope.frames > 0) || memscope.fileError,
                               null, { timeout: 60000 });
    result.final = await snapshot(page);
    result.inked = await inkedShare(page);
    await page.screenshot({ path: path.join(outdir, "file.png"), fullPage: true });
  } else if (scenario === "replay") {
    const drawn = () => page.waitForFunction(() => window.memscope && memscope.session && memscope.session.ended &&
                                             memscope.frames > 0 && memscope.lastDrawFrames === memscope.frames &&
                                             Object.keys(memscope.axes).length === memscope.charts.length,
                                             null, { timeout: 120000, polling: 50 });
    const look = () => page.evaluate(() => ({
      start_unix_ms: memscope.session.start_unix_ms, frames: memscope.frames, axes: memscope.axes, yAxes: memscope.yAxes,
      charts: memscope.charts, data: memscope.data(), from_file: memscope.session.from_file,
      source: memscope.source, columns: memscope.columns, totals: memscope.totals, procs: memscope.procs,
      controls_shown: ["#controls", "#readonly", "#history"].filter((q) => document.querySelector(q).offsetParent !== null),
      follow: document.querySelector("#follow").textContent,
    }));
    await page.waitForFunction(() => window.memscope && memscope.session && memscope.session.ended &&
                               memscope.frames >= memscope.session.frames, null, { timeout: 120000 });
    await drawn();
    await page.waitForTimeout(300);
    // The time under the pointer, as the legend shows it.
    const box = await page.locator(".chart .u-over").first().boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    result.hover_time = await page.locator(".chart .u-legend .u-series").first().locator(".u-value").textContent();
    await page.mouse.move(0, 0);
    result.served = await look();
    await page.screenshot({ path: path.join(outdir, "replay-served.png"), fullPage: true });
    await page.setInputFiles("#file", file);
    await page.waitForFunction(() => memscope.source === "file" && memscope.frames > 0, null, { timeout: 120000 });
    await drawn();
    await page.waitForTimeout(300);
    result.opened = await look();
    await page.screenshot({ path: path.join(outdir, "replay-opened.png"), fullPage: true });
  } else if (scenario === "load") {
    // An ended run: its session says how many frames there are to draw.
    await page.waitForFunction(() => window.memscope && memscope.session && memscope.session.ended &&
                               memscope.frames >= memscope.session.frames && memscope.lastDrawFrames === memscope.frames,
                               null, { timeout: 180000, polling: 50 });
    result.navigation_to_draw_ms = Date.now() - t0;
    result.all_drawn_ms = await page.evaluate(() => memscope.lastDrawAt);
    result.first_draw_ms = await page.evaluate(() => memscope.firstDrawMs);
    // A full redraw of every chart with all its points, up to the next
    // painted frame; the median of 10.
    result.redraw_ms = await page.evaluate(async () => {
      const times = [];
      for (let i = 0; i < 10; i++) {
        const start = performance.now();
        memscope.redrawAll();
        await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      return times[5];
    });
    result.fps_idle = await framesPerSecond(page, 2000);
    result.final = await page.evaluate(() => ({ frames: memscope.frames, columns: memscope.columns,
                                                totals: memscope.totals, last: memscope.last }));
    result.charts = await page.evaluate(() => memscope.charts);
    result.inked = await inkedShare(page);
    await page.screenshot({ path: path.join(outdir, "load.png") });
  }
} catch (e) {
  result.error = String(e.stack || e);
} finally {
  await browser.close();
  fs.rmSync(userDir, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
