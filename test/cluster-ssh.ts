// The ssh transport against real machines (registered by cluster-multihost.test.ts, so only one
// 3-node cluster runs at a time). Each machine is a Debian system booted with systemd as PID 1
// (systemd-nspawn -b) in its own network namespace with its own sshd and address, made by
// scripts/cluster/machines.sh with keys made for the test. cluster.sh runs in the hub namespace,
// which routes only to the machines and simweb: no other address is reachable from there.
// Proven: provisioning for real (twice: the second run changes nothing; --check lists what a fresh
// machine lacks), a build shipped over ssh, a 3-node crawl with seed/rounds(up, exchange)/collect
// held to the same coverage, ownership and politeness checks as the local and netns clusters, and
// the systemd unit: status, journald logs, SIGKILL restarted, start at boot, exit 75 not restarted.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// The rolling upgrade, replace, rebalance and two-per-machine phases take ~16 minutes together on 2 quiet cores:
// they run from scripts/fleet-e2e.sh (SHARDCRAWL_FLEET_LONG=1), not in CI's test command.
const FLEET_LONG = process.env.SHARDCRAWL_FLEET_LONG === "1";
import { ROOT, readRequestLog, verifyLog, type VerifyReport } from "./harness/crawl.js";
import { CLUSTER_SH, NODES, must, nodeUa, runCluster, sh, type ClusterRun } from "./cluster-run.js";
import { ShardRouter, equalNodes } from "../packages/shardcrawl/src/shard/shard-spec.js";

const MACHINES_SH = join(ROOT, "scripts/cluster/machines.sh");
const IMAGE = process.env.SHARDCRAWL_MACHINE_IMAGE ?? "/var/cache/shardcrawl/machine-image";
const TOKEN = "lab-status-token-0123456789";
// The long-lived crawls (upgrade, replace, rebalance) go slower than the first, so they are still
// running while nodes are upgraded, lost or added.
const LIVE_DELAY_MS = 1000;
// The rolling upgrade's crawl is bound by politeness: at one request per 4 s per registrable
// domain, each node's largest domain (54 to 60 pages in this world) keeps it crawling for 3.5 to 4
// minutes, more than three nodes take to drain, restart and answer (about 20 s each on an idle
// machine, 35 s at a load average of 40). So every node still has work when it comes back, and the
// test sees it crawl again with the new build, while the CPU stays nearly idle (about 2 pages/s).
const UPGRADE_DELAY_MS = 4000;

function have(cmd: string): boolean {
  return spawnSync("bash", ["-c", `command -v ${cmd}`]).status === 0;
}

function sshLabUnavailable(netnsSkip: string | null): string | null {
  if (netnsSkip) return netnsSkip;
  if (!have("systemd-nspawn")) return "systemd-nspawn is missing (apt-get install systemd-container; scripts/bootstrap.sh with BOOTSTRAP_WITH_FLEET=1)";
  if (!existsSync(join(IMAGE, "lib/systemd/systemd")) && !have("debootstrap")) return `no machine image at ${IMAGE} and no debootstrap to build one`;
  return null;
}

export function sshClusterSuite(netnsSkip: string | null, prefix: string, net: string): void {
  const skip = sshLabUnavailable(netnsSkip);
  if (skip) console.warn(`cluster-ssh: skipped: ${skip}`);
  const env = { SHARDCRAWL_NETNS_PREFIX: prefix, SHARDCRAWL_NETNS_NET: net, SHARDCRAWL_STATUS_TOKEN: TOKEN };
  const hub = `${prefix}-hub`;
  const dir = mkdtempSync(join(tmpdir(), "sc-cluster-ssh-"));
  const lab = join(dir, "lab");
  const state = join(dir, "state");
  const hosts = Array.from({ length: NODES }, (_, i) => `${net}.${i + 1}.2`);
  const sshEnv = { ...env, SSH_OPTS: `-F ${join(lab, "ssh_config")}` };
  const op = (args: string[], timeoutMs = 600_000) => sh([...args, "--transport", "ssh", "--state", join(dir, "operator")], sshEnv, timeoutMs, hub);
  const machines = (args: string[]) => {
    const r = spawnSync("bash", [MACHINES_SH, args[0]!, "--dir", lab, ...args.slice(1)], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 900_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const onMachine = (i: number, cmd: string) => machines(["ssh", "--machine", String(i), "--", "bash", "-c", cmd]);
  const unitProp = (i: number, name: string, prop: string) => onMachine(i, `systemctl show -p ${prop} --value shardcrawl-node@${name}`).stdout.trim();
  let run: ClusterRun;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  type Spec = { outRoot: string; defaults: Record<string, unknown>; nodes: Array<Record<string, unknown>> };
  interface Phase { file: string; state: string; log: string; delayMs: number }
  /** A crawl of the same world as the first one, by long-lived nodes, with its own simweb (and request log). */
  function phase(name: string, mutate: (spec: Spec) => void): Phase {
    // Nodes a failed earlier phase left running would keep their own cluster file (starting a
    // running unit does nothing) and hold the status port.
    must(op(["down", "--cluster", run.cluster]), "down (before the phase)");
    // Under the state directory: the machines see it (bound read-only), so they find simweb's CA.
    const st = join(state, name);
    const info = JSON.parse(must(sh(["sim", "up", "--transport", "netns", "--state", st, "--sim-args", [...run.simArgs, "--port", "0", "--https-port", "0"].join(" ")], env), "sim up").trim().split("\n").pop()!) as { http: number; https: number; ca: string };
    const spec = JSON.parse(readFileSync(run.cluster, "utf8")) as Spec;
    spec.outRoot = `/data/crawl/${name}`;
    spec.defaults.exitWhenDone = false;
    spec.defaults.caFile = info.ca;
    spec.defaults.connectTo = [`:80:${net}.0.1:${info.http}`, `:443:${net}.0.1:${info.https}`];
    spec.defaults.delayMs = LIVE_DELAY_MS;
    mutate(spec);
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, JSON.stringify(spec));
    return { file, state: st, log: join(st, "simweb-requests.jsonl"), delayMs: spec.defaults.delayMs as number };
  }
  /** The operator's timers (exchange, snapshot), as a loop in the hub until killed. */
  const loops: ChildProcess[] = [];
  function every(seconds: number, args: string[]): ChildProcess {
    const line = `bash ${CLUSTER_SH} ${args.map((a) => `'${a}'`).join(" ")} --transport ssh --state ${join(dir, "operator")} >/dev/null 2>&1`;
    const loop = spawn("ip", ["netns", "exec", hub, "bash", "-c", `while true; do ${line}; sleep ${seconds}; done`], { env: { ...process.env, ...sshEnv }, stdio: "ignore", detached: true });
    loops.push(loop);
    return loop;
  }
  function stop(loop: ChildProcess): void {
    try { process.kill(-loop.pid!, "SIGTERM"); } catch { /* already gone */ }
  }
  interface Row { node: string; up: boolean; fetched: number; queued: number }
  function statusRows(file: string): Row[] {
    const j = spawnSync("ip", ["netns", "exec", hub, process.execPath, join(ROOT, "packages/shardcrawl/dist/cli/main.js"), "status", "--cluster", file, "--json", "--timeout", "3000"], { encoding: "utf8", env: { ...process.env, ...sshEnv } });
    try { return JSON.parse(j.stdout) as Row[]; } catch { return []; }
  }
  /** Until the crawl has nothing left: every node up with an empty frontier, nothing to exchange, no new fetches, three times running. */
  async function settle(file: string, nodes = NODES, timeoutMs = 600_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    let calm = 0;
    let last = -1;
    while (calm < 3) {
      if (Date.now() > end) throw new Error("the crawl did not settle");
      const moved = Number(/moved (\d+)/.exec(op(["exchange", "--cluster", file]).stdout)?.[1] ?? -1);
      const rows = statusRows(file);
      const fetched = rows.reduce((a, r) => a + r.fetched, 0);
      const quiet = rows.length === nodes && rows.every((r) => r.up && r.queued === 0) && moved === 0 && fetched === last;
      calm = quiet ? calm + 1 : 0;
      last = fetched;
      await sleep(3000);
    }
  }
  function finish(p: Phase, file: string): VerifyReport {
    must(op(["down", "--cluster", file]), "down");
    must(sh(["sim", "down", "--transport", "netns", "--state", p.state], env), "sim down");
    return verifyLog(run.simArgs, p.log, { minGapMs: p.delayMs, maxConcurrency: 1, seedsFile: run.seedsFile, scope: "domains", maxCrawlDelayMs: 300 });
  }
  async function until(what: string, ok: () => boolean, timeoutMs = 90_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  describe.skipIf(skip !== null)("3-node cluster on ssh machines (systemd, sshd, netns)", () => {
    let checkFresh: { code: number | null; stdout: string };
    let provision1: { code: number | null; stdout: string };
    let provision2: { code: number | null; stdout: string };
    let checkAfter: { code: number | null; stdout: string };
    let installed: { code: number | null; stdout: string; stderr: string };
    let names: string[];
    beforeAll(() => {
      mkdirSync(state, { recursive: true });
      const up = machines(["up", "--nodes", String(NODES), "--bind-ro", state]);
      if (up.code !== 0) throw new Error(`machines up failed: ${up.stdout}\n${up.stderr}`);
      // A cluster file naming the machines, for the commands that run before the crawl's own.
      const pre = join(dir, "machines.yaml");
      writeFileSync(pre, JSON.stringify({ nodes: hosts.map((host, i) => ({ name: `node${i}`, host })) }));
      const prov = ["provision", "--cluster", pre, "--provision-args", "--no-nvme --no-sysctl --no-unbound"];
      checkFresh = op(["provision", "--cluster", pre, "--provision-args", "--check --no-nvme --no-sysctl --no-unbound"]);
      provision1 = op(prov);
      provision2 = op(prov);
      checkAfter = op(["provision", "--cluster", pre, "--provision-args", "--check --no-nvme --no-sysctl --no-unbound"]);
      installed = op(["install", "--cluster", pre, "--build-id", "build-a"]);
      if (installed.code !== 0) throw new Error(`install failed: ${installed.stdout}\n${installed.stderr}`);
      run = runCluster({ transport: "ssh", dir, env: sshEnv, operatorNs: hub, simAddress: `${net}.0.1`, nodeHosts: hosts });
      names = run.nodeOuts.map((o) => o.split("/").pop()!);
    }, 900_000);
    afterAll(() => {
      for (const l of loops) stop(l);
      sh(["sim", "down", "--transport", "netns", "--state", join(dir, "state-quota")], env);
      for (const s of ["upgrade", "replace", "rebalance"]) sh(["sim", "down", "--transport", "netns", "--state", join(state, s)], env);
      machines(["down"]);
    }, 300_000);

    test("provisioning: a fresh machine lacks things, the first run changes them, the second changes nothing", () => {
      expect(checkFresh.code).toBe(1);
      expect(checkFresh.stdout).toMatch(/lacks: user shardcrawl/);
      expect(checkFresh.stdout).toMatch(/lacks: \/etc\/systemd\/system\/shardcrawl-node@\.service/);
      expect(provision1.code, provision1.stdout).toBe(0);
      expect(provision1.stdout.match(/provision: \d+ change\(s\)/g)).toHaveLength(NODES);
      expect(provision2.code, provision2.stdout).toBe(0);
      expect(provision2.stdout.match(/provision: no change/g)).toHaveLength(NODES);
      expect(provision2.stdout).not.toMatch(/change: /);
      expect(checkAfter.code).toBe(0);
      expect(installed.stdout.match(/build build-a installed/g)).toHaveLength(NODES);
    });

    test("the shipped build carries production dependencies only", () => {
      const pkg = (f: string) => JSON.parse(readFileSync(join(ROOT, f), "utf8")) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      const node = pkg("packages/shardcrawl/package.json");
      const prod = Object.keys(node.dependencies ?? {}).sort();
      // Packages only the checkout needs (compiler, linter, test runner, simweb...).
      const devOnly = [...Object.keys(pkg("package.json").devDependencies ?? {}), ...Object.keys(node.devDependencies ?? {})].filter((d) => !prod.includes(d));
      expect(devOnly).toEqual(expect.arrayContaining(["typescript", "vitest", "@shardcrawl/simweb"]));
      const mb = Number(spawnSync("du", ["-sm", join(ROOT, "node_modules")], { encoding: "utf8" }).stdout.split("\t")[0]);
      for (let i = 0; i < NODES; i++) {
        const top = onMachine(i, "cd /opt/shardcrawl/ && ls -A . && echo -- && ls -A packages && echo -- && ls node_modules 2>&1; true").stdout.trim().split("\n--\n");
        expect(top[0]!.split("\n"), "the release's top level").toEqual(["deploy", "packages", "scripts"]);
        expect(top[1], "only the node package").toBe("shardcrawl");
        const direct = onMachine(i, "ls /opt/shardcrawl/packages/shardcrawl/node_modules").stdout.trim().split("\n").sort();
        expect(direct).toEqual(prod);
        // Every installed package, direct or not (pnpm's virtual store: <name with + for />@<version>).
        const all = onMachine(i, "ls /opt/shardcrawl/packages/shardcrawl/node_modules/.pnpm").stdout.trim().split("\n").map((e) => e.replace(/^(@?[^@]+)@.*$/, "$1").replace("+", "/"));
        expect(all.length).toBeGreaterThan(prod.length);
        for (const d of devOnly) expect(all, d).not.toContain(d);
        const shipped = Number(onMachine(i, "du -sm /opt/shardcrawl/").stdout.split("\t")[0]);
        if (i === 0) console.log(`shipped build: ${shipped} MB with ${all.length} packages (this checkout's root node_modules alone: ${mb} MB)`);
      }
    });

    test("the crawl rounds complete over ssh", () => {
      expect(run.rounds.code, run.rounds.stdout + run.rounds.stderr).toBe(0);
      expect(run.rounds.stdout).toMatch(/== done after \d+ rounds/);
    });

    test("the union of fetched pages is the whole reachable allowed set, each once, politely", () => {
      const r = run.report;
      expect(r.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
      expect(r.coverage!.expected).toBeGreaterThan(300);
      expect(r.coverage!.missing.count).toBe(0);
      expect(r.coverage!.duplicates.extraFetches).toBe(0);
    });

    test("every host was fetched only by its owner, and links crossed machines", () => {
      for (const [host, who] of run.fetchersByHost) expect([...who], host).toEqual([run.router.ownerOfHost(host)]);
      expect(new Set([...run.fetchersByHost.values()].map((s) => [...s][0])).size).toBe(NODES);
      for (const [node, lines] of run.pages) for (const l of lines) expect(run.router.ownerOfHost(new URL(l.url).hostname), l.url).toBe(node);
      // Outbox files went from one machine to another between rounds (rsync through the operator).
      const moved = [...run.rounds.stdout.matchAll(/exchange: moved (\d+) files/g)].map((m) => Number(m[1]));
      expect(moved[0]).toBeGreaterThan(0);
      expect(moved.at(-1)).toBe(0);
    });

    test("systemd: status and journald logs, a node killed with SIGKILL is restarted by its unit", async () => {
      // The same cluster, long-lived: nodes stay up (their frontiers are empty) and answer /status.
      const live = join(dir, "live.yaml");
      const spec = JSON.parse(readFileSync(run.cluster, "utf8")) as { defaults: Record<string, unknown> };
      spec.defaults.exitWhenDone = false;
      writeFileSync(live, JSON.stringify(spec));
      must(op(["up", "--cluster", live]), "up (long-lived)");
      await until("every node answers /status", () => /^total\s+up\b/m.test(op(["status", "--cluster", live]).stdout));
      const logs = op(["logs", "--cluster", live, "--lines", "20"]);
      expect(logs.code).toBe(0);
      for (const n of names) expect(logs.stdout).toMatch(new RegExp(`== ${n}\\n(.*\\n)*.*shardcrawl-${n}\\[\\d+\\]`));
      const pid = unitProp(0, names[0]!, "MainPID");
      expect(Number(pid)).toBeGreaterThan(0);
      expect(onMachine(0, `kill -KILL ${pid}`).code).toBe(0);
      await until("the unit restarts the node", () => {
        const now = unitProp(0, names[0]!, "MainPID");
        return now !== "0" && now !== pid && unitProp(0, names[0]!, "ActiveState") === "active";
      });
      expect(unitProp(0, names[0]!, "NRestarts")).toBe("1");
      await until("the restarted node answers /status", () => /^total\s+up\b/m.test(op(["status", "--cluster", live]).stdout));
    }, 300_000);

    test("systemd: the node starts when its machine boots", async () => {
      must(machines(["halt", "--machine", "1"]), "halt m1");
      must(machines(["boot", "--machine", "1", "--bind-ro", state]), "boot m1");
      await until("node1's unit is active after boot", () => unitProp(1, names[1]!, "ActiveState") === "active");
      expect(unitProp(1, names[1]!, "UnitFileState")).toBe("enabled");
      must(op(["down", "--cluster", join(dir, "live.yaml")]), "down");
      for (let i = 0; i < NODES; i++) {
        expect(unitProp(i, names[i]!, "ActiveState")).toBe("inactive");
        expect(unitProp(i, names[i]!, "UnitFileState")).toBe("disabled");
      }
    }, 300_000);

    test("systemd: exit 75 (upstream quota exhausted) is not restarted", async () => {
      // A simweb whose upstream quota is already spent: every page request gets 429 + x-upstream-quota.
      const qstate = join(dir, "state-quota");
      const simCfg = join(dir, "simweb-quota.json");
      writeFileSync(simCfg, JSON.stringify({ ...JSON.parse(readFileSync(join(dir, "simweb.json"), "utf8")), quota: { afterRequests: 0, header: "x-upstream-quota" } }));
      const simArgs = [...run.simArgs.filter((a, i, all) => a !== "--config" && all[i - 1] !== "--config"), "--config", simCfg];
      const info = JSON.parse(must(sh(["sim", "up", "--transport", "netns", "--state", qstate, "--sim-args", [...simArgs, "--port", "0", "--https-port", "0"].join(" ")], env), "sim up").trim().split("\n").pop()!) as { http: number; https: number };
      const spec = JSON.parse(readFileSync(run.cluster, "utf8")) as { outRoot: string; defaults: Record<string, unknown>; nodes: Array<Record<string, unknown>> };
      spec.outRoot = "/data/crawl/quota-run";
      spec.defaults.upstreamQuotaHeader = "x-upstream-quota";
      spec.defaults.connectTo = [`:80:${net}.0.1:${info.http}`, `:443:${net}.0.1:${info.https}`];
      const quota = join(dir, "quota.yaml");
      writeFileSync(quota, JSON.stringify(spec));
      must(op(["up", "--cluster", quota]), "up (quota)");
      await until("every node exits with 75", () => names.every((n, i) => unitProp(i, n, "ExecMainStatus") === "75" && unitProp(i, n, "ActiveState") === "failed"), 120_000);
      // Two restart delays (RestartSec=5) later: still failed, never restarted.
      await new Promise((r) => setTimeout(r, 12_000));
      for (let i = 0; i < NODES; i++) {
        expect(unitProp(i, names[i]!, "ActiveState")).toBe("failed");
        expect(unitProp(i, names[i]!, "NRestarts")).toBe("0");
      }
      must(op(["down", "--cluster", quota]), "down (quota)");
      must(sh(["sim", "down", "--transport", "netns", "--state", qstate], env), "sim down");
    }, 300_000);

    test.runIf(FLEET_LONG)("rolling upgrade of a crawling cluster: each node drained and upgraded while the others crawl, 0 lost URLs, 0 politeness violations", async () => {
      const p = phase("upgrade", (s) => { s.defaults.delayMs = UPGRADE_DELAY_MS; });
      must(op(["up", "--cluster", p.file]), "up");
      const exchange = every(2, ["exchange", "--cluster", p.file]);
      await until("the crawl is under way", () => statusRows(p.file).every((r) => r.up && r.fetched > 0));
      const t0 = Date.now();
      const up = op(["upgrade", "--cluster", p.file, "--build-id", "build-b"]);
      const t1 = Date.now();
      expect(up.code, up.stdout + up.stderr).toBe(0);
      // Per node: when it was told to drain, when its process was gone, when the new one started and
      // when it answered /status (the operator's clock, which is also simweb's: one machine).
      const windows = [...up.stdout.matchAll(/^(\S+): upgraded to build-b, healthy after (\d+) ms \(drain (\d+), stopped (\d+), started (\d+), healthy (\d+);/gm)]
        .map((m) => ({ node: m[1]!, healthyMs: Number(m[2]), drain: Number(m[3]), stopped: Number(m[4]), started: Number(m[5]), healthy: Number(m[6]) }));
      expect(windows.map((w) => w.node)).toEqual(names);
      for (let i = 0; i < NODES; i++) expect(onMachine(i, "readlink /opt/shardcrawl").stdout.trim()).toBe("/opt/shardcrawl-releases/build-b");
      await settle(p.file);
      stop(exchange);
      const tEnd = Date.now();
      const report = finish(p, p.file);
      const log = readRequestLog(p.log) as Array<{ ts: number; ua?: string }>;
      const byNode = (n: string, from: number, to: number) => log.filter((e) => e.ua === nodeUa(n) && e.ts >= from && e.ts <= to).length;
      const lines = windows.map((w) => {
        const others = names.filter((n) => n !== w.node).reduce((a, n) => a + byNode(n, w.drain, w.healthy), 0);
        return { ...w, others, own: byNode(w.node, w.stopped + 1, w.started - 1), after: byNode(w.node, w.healthy + 1, Infinity) };
      });
      const c = report.coverage!;
      console.log([
        `upgrade: ${NODES} nodes in ${t1 - t0} ms; crawl went on ${tEnd - windows.at(-1)!.healthy} ms after the last node was healthy (to settled)`,
        ...lines.map((l) => `  ${l.node}: time to healthy ${l.healthyMs} ms (down ${l.started - l.stopped} ms); others' requests meanwhile ${l.others}; its own while down ${l.own}; its own after, on build-b ${l.after}`),
        `  of ${c.expected} pages: lost ${c.missing.count}, duplicated ${c.duplicates.extraFetches}; violations ${JSON.stringify(report.violations)}`,
      ].join("\n"));
      for (const l of lines) {
        // Upgraded while the others crawled, silent while down, and crawling again on the new build.
        expect(l.others, `${l.node}: the other nodes fetched during its upgrade`).toBeGreaterThan(0);
        expect(l.own, `${l.node}: no request while its process was down`).toBe(0);
        expect(l.after, `${l.node}: crawled again after its upgrade`).toBeGreaterThan(0);
      }
      expect(report.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
      expect(c.expected).toBeGreaterThan(300);
      expect(c.missing.count).toBe(0);
      // Draining returns leased URLs unfetched, so nothing is fetched twice across an upgrade.
      expect(c.duplicates.extraFetches).toBe(0);
    }, 900_000);

    test.runIf(FLEET_LONG)("losing an instance for good: snapshots on a schedule, replace from the last; what is lost and re-fetched is counted", async () => {
      const archive = join(dir, "archive");
      const p = phase("replace", () => {});
      must(op(["up", "--cluster", p.file]), "up");
      const exchange = every(2, ["exchange", "--cluster", p.file]);
      const snapshots = every(5, ["snapshot", "--cluster", p.file, "--archive", archive]);
      const lost = names[2]!;
      await until("a snapshot of the node to lose, taken mid-crawl", () => existsSync(join(archive, lost, "latest", "dump.rdb")) && (statusRows(p.file).find((r) => r.node === lost)?.fetched ?? 0) > 20, 180_000);
      stop(snapshots);
      await sleep(3000);
      const fetchedAtLoss = statusRows(p.file).find((r) => r.node === lost)?.fetched ?? -1;
      const tLoss = Date.now();
      must(machines(["wipe", "--machine", "2"]), "wipe");
      must(machines(["boot", "--machine", "2", "--bind-ro", state]), "boot a fresh machine");
      const replaced = op(["replace", "--cluster", p.file, "--node", lost, "--archive", archive, "--provision-args", "--no-nvme --no-sysctl --no-unbound", "--build-id", "build-c"]);
      expect(replaced.code, replaced.stdout + replaced.stderr).toBe(0);
      const tBack = Date.now();
      await until("the replaced node answers /status", () => statusRows(p.file).find((r) => r.node === lost)?.up === true);
      const tHealthy = Date.now();
      await settle(p.file);
      stop(exchange);
      const report = finish(p, p.file);
      const log = readRequestLog(p.log) as Array<{ ts: number; host: string; path: string; ua?: string; scheme: string }>;
      const lostUa = nodeUa(lost);
      const counts = new Map<string, number>();
      for (const e of log) if (!e.path.startsWith("/robots.txt")) counts.set(`${e.scheme}://${e.host}${e.path}`, (counts.get(`${e.scheme}://${e.host}${e.path}`) ?? 0) + 1);
      const refetched = [...counts].filter(([, n]) => n > 1).map(([u]) => u);
      const c = report.coverage!;
      console.log(`replace: ${lost} lost after ${fetchedAtLoss} fetches; time to healthy ${tHealthy - tLoss} ms (replace command ${tBack - tLoss} ms); of ${c.expected} pages: lost ${c.missing.count}, duplicated ${c.duplicates.extraFetches} fetches (${refetched.length} URLs); violations ${JSON.stringify(report.violations)}`);
      // The replaced node crawled again, politely, and what was lost or fetched twice is its own.
      expect(log.some((e) => e.ts > tBack && e.ua === lostUa)).toBe(true);
      expect(report.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
      for (const u of [...refetched, ...c.missing.examples]) expect(run.router.ownerOfHost(new URL(u).hostname), u).toBe(lost);
      // The loss window is the snapshot interval: far less than what the node had crawled.
      expect(c.missing.count + c.duplicates.extraFetches).toBeLessThan(fetchedAtLoss);
      expect(c.fetchedExpected + c.missing.count).toBe(c.expected);
    }, 900_000);

    test.runIf(FLEET_LONG)("two nodes on one machine over ssh: their own units, status ports and Redis; the world crawled once, each host by its owner, politely", async () => {
      // The layout docs/operations.md gives for a machine whose one Redis would cap its node: the
      // first two nodes share the first machine, each with its own status port, Redis folder and half
      // of the processes; the third keeps a machine of its own.
      const p = phase("two-per-machine", (spec) => {
        const [a, b] = spec.nodes;
        b!.host = a!.host;
        b!.statusPort = 9101;
        for (const n of [a!, b!]) n.config = { ...(n.config as Record<string, unknown>), redisDir: `${spec.outRoot}/redis-${String(n.name)}`, fetchers: 1, parsers: 1 };
      });
      must(op(["up", "--cluster", p.file]), "up");
      const exchange = every(2, ["exchange", "--cluster", p.file]);
      await until("all three nodes answer /status and crawl", () => { const r = statusRows(p.file); return r.length === NODES && r.every((x) => x.up && x.fetched > 0); });
      const units = onMachine(0, `systemctl is-active shardcrawl-node@${names[0]} shardcrawl-node@${names[1]}`).stdout.trim().split("\n");
      const redisServers = Number(onMachine(0, "pgrep -c -x redis-server").stdout.trim());
      const redisDirs = onMachine(0, `readlink -f /data/crawl/two-per-machine/${names[0]}/redis /data/crawl/two-per-machine/${names[1]}/redis`).stdout.trim().split("\n");
      await settle(p.file);
      stop(exchange);
      const report = finish(p, p.file);
      const log = readRequestLog(p.log) as Array<{ host: string; path: string; ua?: string }>;
      const byUa = new Map(names.map((n) => [nodeUa(n), n]));
      const fetchedBy = new Map(names.map((n) => [n, log.filter((e) => e.ua === nodeUa(n)).length]));
      console.log(`two per machine: ${[...fetchedBy].map(([n, c]) => `${n} ${c} requests`).join(", ")}; ${redisServers} redis-servers on the shared machine; violations ${JSON.stringify(report.violations)}`);
      expect(units).toEqual(["active", "active"]);
      expect(redisServers).toBe(2);
      expect(redisDirs).toEqual([`/data/crawl/two-per-machine/redis-${names[0]}`, `/data/crawl/two-per-machine/redis-${names[1]}`]);
      for (const n of names) expect(fetchedBy.get(n), n).toBeGreaterThan(0);
      for (const e of log) expect(byUa.get(e.ua ?? ""), e.host).toBe(run.router.ownerOfHost(e.host));
      expect(report.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
      const c = report.coverage!;
      expect(c.expected).toBeGreaterThan(300);
      expect(c.missing.count).toBe(0);
      expect(c.duplicates.extraFetches).toBe(0);
    }, 900_000);

    test.runIf(FLEET_LONG)("rebalance over ssh: a machine added to a crawling cluster takes over its share; nothing lost, politely", async () => {
      const p = phase("rebalance", () => {});
      // The cluster before: the first two machines. p.file (all three) is the cluster after.
      const spec = JSON.parse(readFileSync(p.file, "utf8")) as Spec;
      const before = join(dir, "rebalance-before.yaml");
      writeFileSync(before, JSON.stringify({ ...spec, nodes: spec.nodes.slice(0, NODES - 1) }));
      const oldRouter = new ShardRouter({ self: names[0]!, nodes: equalNodes(NODES - 1), key: "domain" });
      must(op(["up", "--cluster", before]), "up (two nodes)");
      const exchangeBefore = every(2, ["exchange", "--cluster", before]);
      await until("the two-node crawl is under way", () => { const r = statusRows(before); return r.length === NODES - 1 && r.every((x) => x.up && x.fetched > 10); });
      stop(exchangeBefore);
      const tStop = Date.now();
      const rb = op(["rebalance", "--cluster", p.file]);
      expect(rb.code, rb.stdout + rb.stderr).toBe(0);
      const tUp = Date.now();
      must(op(["up", "--cluster", p.file]), "up (three nodes)");
      const exchange = every(2, ["exchange", "--cluster", p.file]);
      await settle(p.file);
      stop(exchange);
      const report = finish(p, p.file);
      const rehomed = [...rb.stdout.matchAll(/^\{"node".*\}$/gm)].map((m) => JSON.parse(m[0]) as { node: string; hostsMoved: number; urlsMoved: number; byOwner: Record<string, number> });
      const newNode = names[NODES - 1]!;
      const log = readRequestLog(p.log) as Array<{ ts: number; host: string; path: string; scheme: string; ua?: string }>;
      const byUa = new Map(names.map((n) => [nodeUa(n), n]));
      const moved = new Set<string>();
      for (const e of log) if (oldRouter.ownerOfHost(e.host) !== run.router.ownerOfHost(e.host)) moved.add(e.host);
      const counts = new Map<string, number>();
      for (const e of log) if (!e.path.startsWith("/robots.txt")) counts.set(`${e.scheme}://${e.host}${e.path}`, (counts.get(`${e.scheme}://${e.host}${e.path}`) ?? 0) + 1);
      const refetched = [...counts].filter(([, n]) => n > 1).map(([u]) => u);
      const c = report.coverage!;
      const urlsMoved = rehomed.reduce((a, r) => a + r.urlsMoved, 0);
      console.log(`rebalance: 2 -> 3 nodes in ${tUp - tStop} ms; ${rehomed.map((r) => `${r.node} moved ${r.urlsMoved} URLs of ${r.hostsMoved} hosts`).join(", ")}; ${newNode} fetched ${log.filter((e) => e.ua === nodeUa(newNode)).length}; of ${c.expected} pages: lost ${c.missing.count}, duplicated ${c.duplicates.extraFetches} fetches (${refetched.length} URLs); violations ${JSON.stringify(report.violations)}`);
      // Both old nodes were rehomed, the new machine had nothing to move, and queued URLs went over.
      expect(rehomed.map((r) => r.node).sort()).toEqual(names.slice(0, NODES - 1));
      expect(rb.stdout).toMatch(new RegExp(`${newNode}: new node \\(nothing crawled yet\\), nothing to rehome`));
      expect(urlsMoved).toBeGreaterThan(0);
      for (const r of rehomed) for (const owner of Object.keys(r.byOwner)) expect(owner).toBe(newNode);
      // Every request by the owner of its host at that time: the old two before, the new three after.
      for (const e of log) {
        const who = byUa.get(e.ua ?? "");
        if (e.ts <= tStop) expect(who, `${e.host} before`).toBe(oldRouter.ownerOfHost(e.host));
        else if (e.ts >= tUp) expect(who, `${e.host} after`).toBe(run.router.ownerOfHost(e.host));
      }
      expect(log.some((e) => e.ua === nodeUa(newNode) && e.ts >= tUp)).toBe(true);
      expect(report.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
      expect(c.expected).toBeGreaterThan(300);
      expect(c.missing.count).toBe(0);
      // The new owner starts without the old owners' seen filter: it may fetch again a page of a host
      // it took over, and only such pages.
      for (const u of refetched) expect(moved.has(new URL(u).hostname), u).toBe(true);
    }, 900_000);
  });
}
