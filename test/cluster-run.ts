// Shared by the cluster tests: runs scripts/cluster.sh (sim up, rounds, exchange...) for a
// 3-node cluster over the local, netns or ssh transport, then checks the union of the nodes' output
// against simweb's own request log.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, SIMWEB, TEST_UA, readPageLog, readRequestLog, verifyLog, writeSeeds, type PageLine, type VerifyReport } from "./harness/crawl.js";
import { ShardRouter, equalNodes } from "../packages/shardcrawl/src/shard/shard-spec.js";

export const CLUSTER_SH = join(ROOT, "scripts/cluster.sh");
export const NODES = 3;
const DELAY_MS = 20;

export interface ClusterRun {
  dir: string;
  cluster: string;
  seedsFile: string;
  simArgs: string[];
  nodeOuts: string[];
  rounds: { code: number | null; stdout: string; stderr: string };
  report: VerifyReport;
  pages: Map<string, PageLine[]>;
  /** host -> the node names whose user agent fetched it, from simweb's log. */
  fetchersByHost: Map<string, Set<string>>;
  router: ShardRouter;
}

/** Runs scripts/cluster.sh; `within` runs it inside that network namespace (the ssh operator's place). */
export function sh(args: string[], env: Record<string, string> = {}, timeoutMs = 600_000, within?: string): { code: number | null; stdout: string; stderr: string } {
  const argv = within ? ["ip", ["netns", "exec", within, "bash", CLUSTER_SH, ...args]] as const : ["bash", [CLUSTER_SH, ...args]] as const;
  const r = spawnSync(argv[0], argv[1], { encoding: "utf8", env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function must(r: { code: number | null; stdout: string; stderr: string }, what: string): string {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}): ${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The user agent of node i: the same robots.txt product token, plus the node's name. */
export function nodeUa(name: string): string {
  return TEST_UA.replace(")", `; ${name})`);
}

export interface ClusterOptions {
  transport: "local" | "netns" | "ssh";
  env?: Record<string, string>;
  /** The test's directory (made when absent). */
  dir?: string;
  /** ssh: the hub namespace cluster.sh runs in (it reaches the machines and simweb). */
  operatorNs?: string;
  /** Where simweb listens, as the nodes reach it. */
  simAddress: string;
  /** Each node's address (netns) or 127.0.0.1. */
  nodeHosts: string[];
  /** Runs between `sim up` and `rounds` (e.g. read a packet counter). */
  beforeRounds?: () => void;
}

export function runCluster(opts: ClusterOptions): ClusterRun {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), `sc-cluster-${opts.transport}-`));
  const state = join(dir, "state");
  const ssh = opts.transport === "ssh";
  // simweb runs where the operator is: this machine, or the hub namespace (netns and ssh).
  const simTransport = ssh ? "netns" : opts.transport;
  const run = (args: string[]) => sh(args, opts.env ?? {}, 600_000, opts.operatorNs);
  const simCfg = join(dir, "simweb.json");
  writeFileSync(simCfg, JSON.stringify({ pageSize: { median: 5000, mean: 6000, min: 2000, max: 30000 }, pagesPerHost: { min: 8, alpha: 1.2, max: 30 }, hostPageCap: 30 }));
  const simArgs = ["--preset", "polite", "--seed", "23", "--hosts", "30", "--config", simCfg];
  const env = opts.env ?? {};
  const info = JSON.parse(must(sh(["sim", "up", "--transport", simTransport, "--state", state, "--sim-args", [...simArgs, "--port", "0", "--https-port", "0"].join(" ")], env), "sim up").trim().split("\n").pop()!) as { http: number; https: number; ca: string };
  const seedsFile = join(dir, "seeds.txt");
  writeSeeds(simArgs, seedsFile);
  const names = equalNodes(NODES).map((n) => n.name);
  const cluster = join(dir, "cluster.yaml");
  // JSON is YAML: the loader reads it as such.
  // ssh: paths are the machines' (deploy/provision-i7i.sh makes /data/crawl and /data/seeds); the
  // CA file is in the state directory, which the test machines see read-only at the same path.
  writeFileSync(cluster, JSON.stringify({
    name: `test-${opts.transport}`,
    seeds: ssh ? "/data/seeds/seeds.txt" : "seeds.txt",
    outRoot: ssh ? "/data/crawl" : "nodes",
    defaults: {
      ...(ssh ? { statusBind: "0.0.0.0" } : {}),
      exitWhenDone: true, allowPrivate: true, caFile: info.ca, delayMs: DELAY_MS, maxCrawlDelayMs: 300,
      // simweb hosts whose robots.txt never answers wait (deferred); do not hold the end 2 minutes for them.
      maxDeferWaitMs: 3000,
      connectTo: [`:80:${opts.simAddress}:${info.http}`, `:443:${opts.simAddress}:${info.https}`],
      fetchers: 1, parsers: 1, expectedUrls: 100_000, progress: "off",
    },
    nodes: names.map((name, i) => ({ name, host: opts.nodeHosts[i], ...(ssh ? { statusPort: 9100 } : {}), config: { userAgent: nodeUa(name) } })),
  }, null, 2));
  opts.beforeRounds?.();
  if (ssh) must(run(["seed", "--cluster", cluster, "--transport", "ssh", "--seeds", seedsFile]), "seed");
  const rounds = run(["rounds", "--cluster", cluster, "--transport", opts.transport, "--max-rounds", "5"]);
  must(sh(["sim", "down", "--transport", simTransport, "--state", state], env), "sim down");
  if (ssh) must(run(["collect", "--cluster", cluster, "--transport", "ssh", "--dest", join(dir, "collected")]), "collect");
  const logFile = join(state, "simweb-requests.jsonl");
  const report = verifyLog(simArgs, logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 300 });
  const nodeOuts = names.map((n) => join(dir, ssh ? "collected" : "nodes", n));
  const pages = new Map(names.map((n, i) => [n, readPageLog(nodeOuts[i]!)]));
  const fetchersByHost = new Map<string, Set<string>>();
  const byUa = new Map(names.map((n) => [nodeUa(n), n]));
  for (const e of readRequestLog(logFile) as Array<{ host: string; ua?: string }>) {
    const who = byUa.get(e.ua ?? "") ?? `unknown:${e.ua}`;
    const set = fetchersByHost.get(e.host) ?? new Set<string>();
    set.add(who);
    fetchersByHost.set(e.host, set);
  }
  void SIMWEB;
  return { dir, cluster, seedsFile, simArgs, nodeOuts, rounds, report, pages, fetchersByHost, router: new ShardRouter({ self: names[0]!, nodes: equalNodes(NODES), key: "domain" }) };
}
