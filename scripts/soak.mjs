#!/usr/bin/env node
// A long soak of one shardcrawl node against simweb: CPU, resident memory of every process and
// Redis memory sampled at a fixed interval (default each minute) into a JSON-lines file, then drawn
// as an SVG chart. Not part of CI: it runs for hours.
//   node scripts/soak.mjs [--duration 7200] [--interval 60] [--out DIR] [--hosts 3000] [--delay 10000]
//   node scripts/soak.mjs --render DIR/samples.jsonl [--svg bench-results/soak.svg]
// The crawl runs at a per-host delay above the 4 s keep-alive (as the fleet does), with the default
// (hostile) simweb preset, and ships closed files to nowhere with --delete-shipped so a soak of
// hours does not fill the disk: the soak is about the node's memory and CPU staying flat.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  RESULTS_DIR, SHARDCRAWL_CLI, SIMWEB_CLI, descendants, machine, nodeRoleOf, procCpu, procRss, startRedisServer, startSimweb,
} from "./bench/common.mjs";

const { values: a } = parseArgs({ options: {
  duration: { type: "string", default: "7200" }, interval: { type: "string", default: "60" },
  out: { type: "string", default: resolve("soak-out") }, hosts: { type: "string", default: "3000" },
  delay: { type: "string", default: "10000" }, fetchers: { type: "string", default: "1" }, parsers: { type: "string", default: "1" },
  render: { type: "string" }, svg: { type: "string" },
} });

async function soak() {
  const out = resolve(a.out);
  mkdirSync(out, { recursive: true });
  const samplesFile = join(out, "samples.jsonl");
  writeFileSync(samplesFile, "");
  const sim = await startSimweb({ preset: "default", hosts: Number(a.hosts), seed: 7, httpsShare: 0.5 }, [], join(out, "simweb"));
  const seeds = join(out, "seeds.txt");
  const r = spawnSync(process.execPath, [SIMWEB_CLI, "seeds", "--config", sim.cfgFile], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`simweb seeds: ${r.stderr}`);
  writeFileSync(seeds, r.stdout);
  const redis = await startRedisServer(join(out, "redis"));
  const argv = [
    SHARDCRAWL_CLI, "crawl", "--seeds", seeds, "--out", join(out, "crawl"), "--redis", redis.url, "--progress", "off",
    "--delay", a.delay, "--max-page-bytes", String(250 * 1024), "--allow-private", "--ca-file", sim.ca,
    "--user-agent", "shardcrawl-soak/0.1 (+https://github.com/shardcrawl/shardcrawl)",
    "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`,
    "--fetchers", a.fetchers, "--parsers", a.parsers, "--fetcher-concurrency", "256",
    // Closed files are "shipped" to nowhere and deleted: hours of WARC would otherwise fill the disk.
    "--on-file-closed", "true", "--delete-shipped", "--warc-max-file-bytes", String(64 << 20),
    "--max-defer-wait", String(3 * 3600_000),
  ];
  const crawl = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  crawl.stderr.on("data", (b) => { stderr = (stderr + b).slice(-20_000); });
  let exited = null;
  crawl.once("exit", (c, s) => { exited = c ?? s; });
  const t0 = Date.now();
  const prevCpu = new Map();
  let prevT = t0;
  process.stderr.write(`soak: ${a.duration} s, samples every ${a.interval} s to ${samplesFile}\n`);
  const sample = async () => {
    const now = Date.now();
    const dt = (now - prevT) / 1000;
    prevT = now;
    const roles = {};
    for (const pid of [crawl.pid, ...descendants(crawl.pid), redis.pid, sim.proc.pid]) {
      const c = procCpu(pid);
      if (!c) continue;
      const role = pid === sim.proc.pid ? "simweb" : nodeRoleOf(pid, redis.pid);
      const x = (roles[role] ??= { processes: 0, rssMB: 0, cpuPercent: 0, maxRssMB: 0 });
      const rss = procRss(pid) / 1e6;
      x.processes++;
      x.rssMB += rss;
      x.maxRssMB = Math.max(x.maxRssMB, rss);
      // A process that started within the interval counts from zero.
      x.cpuPercent += ((c.self - (prevCpu.get(pid) ?? 0)) / dt) * 100;
      prevCpu.set(pid, c.self);
    }
    const info = await redis.client.info("memory").catch(() => "");
    const stats = await redis.client.hgetall("sc:stats").catch(() => ({}));
    const num = (re) => Number(re.exec(info)?.[1] ?? NaN);
    const s = {
      t: new Date(now).toISOString(), elapsedS: Math.round((now - t0) / 1000), load1: loadavg()[0], roles,
      redis: { usedMemoryMB: num(/used_memory:(\d+)/) / 1e6, rssMB: num(/used_memory_rss:(\d+)/) / 1e6 },
      fetched: Number(stats.fetched ?? 0), discovered: Number(stats.discovered ?? 0),
    };
    appendFileSync(samplesFile, JSON.stringify(s) + "\n");
  };
  await sample();
  const end = t0 + Number(a.duration) * 1000;
  while (Date.now() < end && exited === null) {
    await new Promise((res) => setTimeout(res, Math.min(Number(a.interval) * 1000, Math.max(0, end - Date.now()))));
    await sample();
  }
  if (exited === null) {
    crawl.kill("SIGTERM");
    await Promise.race([new Promise((res) => crawl.once("exit", res)), new Promise((res) => setTimeout(res, 120_000))]);
    if (crawl.exitCode === null) crawl.kill("SIGKILL");
  } else {
    process.stderr.write(`crawl exited early (${exited}) after ${Math.round((Date.now() - t0) / 1000)} s:\n${stderr.slice(-3000)}\n`);
  }
  writeFileSync(join(out, "crawl-stderr.txt"), stderr);
  await redis.stop();
  await sim.stop();
  const svg = join(out, "soak.svg");
  render(samplesFile, svg);
  writeFileSync(join(out, "summary.json"), JSON.stringify({ machine: machine(), command: `node scripts/soak.mjs ${process.argv.slice(2).join(" ")}`, ...summarize(readSamples(samplesFile)) }, null, 2) + "\n");
  process.stderr.write(`soak done: ${svg}\n`);
}

function readSamples(file) {
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** Growth per hour of each role's RSS and of Redis memory, between the second quarter and the end (start-up left out). */
function summarize(samples) {
  if (samples.length < 4) return { samples: samples.length };
  const a = samples[Math.floor(samples.length / 4)];
  const b = samples[samples.length - 1];
  const hours = (b.elapsedS - a.elapsedS) / 3600;
  const rssGrowthMBPerHour = {};
  for (const r of Object.keys(b.roles)) rssGrowthMBPerHour[r] = ((b.roles[r].rssMB - (a.roles[r]?.rssMB ?? 0)) / hours);
  const pagesPerS = (b.fetched - a.fetched) / (b.elapsedS - a.elapsedS);
  return {
    samples: samples.length, hours: b.elapsedS / 3600, fetched: b.fetched, pagesPerS, rssGrowthMBPerHour,
    redisUsedGrowthMBPerHour: (b.redis.usedMemoryMB - a.redis.usedMemoryMB) / hours,
    final: { roles: b.roles, redis: b.redis },
  };
}

const COLORS = { supervisor: "#1f77b4", fetcher: "#d62728", parser: "#2ca02c", redis: "#9467bd", simweb: "#8c564b", pages: "#ff7f0e", used: "#9467bd", rss: "#17becf" };
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** One panel: several series over elapsed minutes, own y axis from 0 to the maximum. */
function panel(y0, title, unit, series, xMax) {
  const W = 760, H = 170, L = 60, T = y0 + 24;
  const yMax = Math.max(1e-9, ...series.flatMap((s) => s.points.map((p) => p[1]).filter(Number.isFinite))) * 1.1;
  const x = (v) => L + (v / Math.max(1, xMax)) * W;
  const y = (v) => T + H - (v / yMax) * H;
  let g = `<text x="${L}" y="${y0 + 16}" font-size="14" font-weight="bold">${esc(title)}</text>\n`;
  g += `<rect x="${L}" y="${T}" width="${W}" height="${H}" fill="none" stroke="#888"/>\n`;
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    g += `<line x1="${L}" x2="${L + W}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${L - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${v < 10 ? v.toFixed(1) : Math.round(v)}</text>\n`;
  }
  g += `<text x="14" y="${T + H / 2}" font-size="11" transform="rotate(-90 14 ${T + H / 2})" text-anchor="middle">${esc(unit)}</text>\n`;
  const step = xMax > 240 ? 30 : xMax > 60 ? 15 : 5;
  for (let m = 0; m <= xMax; m += step) g += `<text x="${x(m)}" y="${T + H + 14}" font-size="11" text-anchor="middle">${m}</text>\n`;
  let lx = L + 8;
  for (const s of series) {
    const pts = s.points.filter((p) => Number.isFinite(p[1])).map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    g += `<polyline fill="none" stroke="${s.color}" stroke-width="1.6" points="${pts}"/>\n`;
    g += `<rect x="${lx}" y="${T + 6}" width="10" height="10" fill="${s.color}"/><text x="${lx + 14}" y="${T + 15}" font-size="11">${esc(s.name)}</text>\n`;
    lx += 24 + s.name.length * 6.5;
  }
  return g;
}

/** Draws the samples file as an SVG: CPU per role, RSS per role, Redis memory and pages fetched. */
function render(samplesFile, svgFile) {
  const samples = readSamples(samplesFile);
  if (!samples.length) throw new Error(`${samplesFile}: no samples`);
  const minutes = (s) => s.elapsedS / 60;
  const xMax = minutes(samples[samples.length - 1]);
  const roles = [...new Set(samples.flatMap((s) => Object.keys(s.roles)))];
  const byRole = (f) => roles.map((r) => ({ name: r, color: COLORS[r] ?? "#555", points: samples.map((s) => [minutes(s), s.roles[r] ? f(s.roles[r]) : NaN]) }));
  // CPU of the first sample is since process start, not over an interval: left out.
  const cpu = byRole((x) => x.cpuPercent).map((s) => ({ ...s, points: s.points.slice(1) }));
  const sum = summarize(samples);
  const head = `shardcrawl soak: ${samples.length} samples over ${xMax.toFixed(0)} min, ${samples[samples.length - 1].fetched} pages fetched (${samples[0].t.slice(0, 16).replace("T", " ")} UTC)`;
  let body = `<text x="60" y="22" font-size="15" font-weight="bold">${esc(head)}</text>\n`;
  body += panel(34, "CPU per role (% of one core, per interval)", "%", cpu, xMax);
  body += panel(254, "Resident memory per role (MB, summed over the role's processes)", "MB", byRole((x) => x.rssMB), xMax);
  body += panel(474, "Redis memory (MB) and pages fetched (thousands)", "MB / kpages", [
    { name: "used_memory", color: COLORS.used, points: samples.map((s) => [minutes(s), s.redis.usedMemoryMB]) },
    { name: "used_memory_rss", color: COLORS.rss, points: samples.map((s) => [minutes(s), s.redis.rssMB]) },
    { name: "pages fetched (k)", color: COLORS.pages, points: samples.map((s) => [minutes(s), s.fetched / 1000]) },
  ], xMax);
  const growth = sum.rssGrowthMBPerHour ? Object.entries(sum.rssGrowthMBPerHour).map(([r, v]) => `${r} ${v.toFixed(1)}`).join(", ") : "n/a";
  body += `<text x="60" y="702" font-size="12">minutes since start; RSS growth after the first quarter, MB/hour: ${esc(growth)}; Redis used_memory ${sum.redisUsedGrowthMBPerHour?.toFixed(1) ?? "n/a"} MB/hour</text>\n`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="840" height="716" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${body}</svg>\n`;
  writeFileSync(svgFile, svg);
  return sum;
}

if (a.render) {
  const svg = a.svg ?? join(RESULTS_DIR, "soak.svg");
  const sum = render(a.render, svg);
  process.stdout.write(JSON.stringify(sum, null, 2) + "\n");
  process.stderr.write(`wrote ${svg}\n`);
} else {
  await soak();
  process.exit(0);
}
