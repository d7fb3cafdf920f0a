// System tools some tests need (Debian packages that scripts/bootstrap.sh installs when it can):
// promtool (prometheus) and chromium. A test that lacks one skips and says so loudly.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./crawl.js";

export const CHROMIUM = process.env.SHARDCRAWL_CHROMIUM ?? "/usr/bin/chromium";

/** null when the tool runs, else why the test is skipped (printed once, loudly). */
export function missingTool(cmd: string, args: string[] = ["--version"]): string | null {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return null;
  const why = `SKIPPED: ${cmd} is not available (${r.error?.message ?? `exit ${r.status}`}); install it (scripts/bootstrap.sh with BOOTSTRAP_WITH_OBSERVE_TOOLS=1) to run these tests`;
  console.warn(`\n${"!".repeat(100)}\n${why}\n${"!".repeat(100)}\n`);
  return why;
}

/** Runs promtool with stdin; returns its exit code and all it printed. */
export function promtool(args: string[], input?: string): { code: number | null; output: string } {
  const r = spawnSync("promtool", args, { encoding: "utf8", input, timeout: 60_000 });
  return { code: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}

/** Metric families named in an exposition (# TYPE lines). */
export function exportedFamilies(exposition: string): Set<string> {
  const out = new Set<string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) \S+$/gm)) out.add(m[1]!);
  return out;
}

interface Dashboard {
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
}

/** Every query of the Grafana dashboard (deploy/grafana/shardcrawl.json), with its panel's title. */
export function dashboardExprs(): Array<{ panel: string; expr: string }> {
  const d = JSON.parse(readFileSync(join(ROOT, "deploy/grafana/shardcrawl.json"), "utf8")) as Dashboard;
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}
