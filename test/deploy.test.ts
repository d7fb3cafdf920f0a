// deploy/: the Prometheus config is generated from the fleet inventory (and must match the
// committed file), passes `promtool check config`; the Grafana dashboard parses, its queries parse
// as PromQL (promtool check rules) and name only shardcrawl_ metrics. That those metrics are
// really exported is checked against a live scrape in test/observe.test.ts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT, SHARDCRAWL } from "./harness/crawl.js";
import { dashboardExprs, missingTool, promtool } from "./harness/tools.js";
import { EXIT_CODES } from "../packages/shardcrawl/src/node/exit-codes.js";

const FLEET = "deploy/cluster.fleet.yaml";
const noPromtool = missingTool("promtool");

function generate(extra: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SHARDCRAWL, "cluster", "prometheus", "--cluster", FLEET, ...extra], { cwd: ROOT, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}


describe("deploy: Prometheus config from the fleet inventory", () => {
  test("deploy/prometheus.yml is what the generator makes from deploy/cluster.fleet.yaml", () => {
    const fresh = generate([]);
    expect(fresh.code, fresh.stderr).toBe(0);
    // Regenerate with: pnpm shardcrawl cluster prometheus --cluster deploy/cluster.fleet.yaml --out deploy/prometheus.yml
    expect(readFileSync(join(ROOT, "deploy/prometheus.yml"), "utf8")).toBe(fresh.stdout);
    // One target per node, with the node's name, and the bearer token (the fleet binds 0.0.0.0).
    expect(fresh.stdout.match(/- 10\.0\.1\.\d+:9100/g)).toHaveLength(12);
    expect(fresh.stdout).toMatch(/shardcrawl_node: n12/);
    expect(fresh.stdout).toMatch(/credentials_file: \/etc\/prometheus\/shardcrawl-status\.token/);
  });

  test.skipIf(noPromtool)("passes promtool check config", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-prom-"));
    const token = join(dir, "token");
    writeFileSync(token, "t0ken-t0ken-t0ken-t0ken\n");
    const r = generate(["--token-file", token]);
    expect(r.code).toBe(0);
    writeFileSync(join(dir, "prometheus.yml"), r.stdout);
    const check = promtool(["check", "config", join(dir, "prometheus.yml")]);
    expect(check.output).toMatch(/SUCCESS/);
    expect(check.code).toBe(0);
  });

  test("a node without a fixed status port is a clear error", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-prom-"));
    const file = join(dir, "c.yaml");
    writeFileSync(file, "nodes:\n  - { name: a, statusPort: 9101 }\n  - { name: b }\n");
    const r = spawnSync(process.execPath, [SHARDCRAWL, "cluster", "prometheus", "--cluster", file], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/nodes b have no fixed statusPort/);
  });
});

describe("deploy: Grafana dashboard", () => {
  test("parses, has the panels an operator needs, and every query names shardcrawl_ metrics", () => {
    const exprs = dashboardExprs();
    const titles = new Set(exprs.map((e) => e.panel));
    for (const want of ["Pages fetched and parsed per second", "Fetcher time blocked, by reason", "Top hosts by pressure", "Fetch errors by class", "Redis memory vs budget", "Resident memory per process"]) {
      expect(titles, want).toContain(want);
    }
    for (const { panel, expr } of exprs) expect(expr, panel).toMatch(/\bshardcrawl_[a-z0-9_]+/);
  });

  test.skipIf(noPromtool)("every query is valid PromQL (promtool check rules)", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-dash-"));
    // Grafana's variables are not PromQL: give them the values Grafana would.
    const rules = dashboardExprs().map(({ expr }, i) => `      - record: dashboard:expr_${i}\n        expr: ${JSON.stringify(expr.replaceAll("$__rate_interval", "1m").replaceAll("$node", ".*"))}`);
    writeFileSync(join(dir, "rules.yml"), `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`);
    const check = promtool(["check", "rules", join(dir, "rules.yml")]);
    expect(check.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(check.code).toBe(0);
  });
});

describe("deploy: the node unit", () => {
  const unit = readFileSync(join(ROOT, "deploy/systemd/shardcrawl-node@.service"), "utf8");
  const value = (key: string) => new RegExp(`^${key}=(.*)$`, "m").exec(unit)?.[1];

  test("its exit codes are the node's: the quota code is not restarted, a signal stop is a success", () => {
    expect(value("RestartPreventExitStatus")).toBe(String(EXIT_CODES.quota));
    expect(value("SuccessExitStatus")).toBe(String(EXIT_CODES.signal));
    expect(value("Restart")).toBe("on-failure");
  });

  test("it is a template run by name from the cluster file, draining on SIGTERM to the node alone", () => {
    expect(value("ExecStart")).toMatch(/ node --cluster \/etc\/shardcrawl\/cluster\.yaml --name %i$/);
    expect(value("KillMode")).toBe("mixed");
    expect(value("KillSignal")).toBe("SIGTERM");
    expect(value("WantedBy")).toBe("multi-user.target");
  });
});
