// Shared pieces of the flow-control integration tests (test/flow-*.test.ts): a simweb config with
// only the behaviours a test wants, the World to know which host has which behaviour, and the
// request log with the server's own in-flight count per host.
import { readFileSync, writeFileSync } from "node:fs";
import { BEHAVIOURS, makeConfig, ROBOTS_KINDS, World, type Behaviour, type SimwebConfig } from "../packages/simweb/src/index.js";

export interface SimRequest {
  ts: number;
  end: number;
  host: string;
  path: string;
  status: number;
  inflight: number;
}

/** Every behaviour off unless given; robots.txt empty (allow all, no Crawl-delay); no cross-host or broken links. */
export function flowSimConfig(behaviours: Partial<Record<Behaviour, number>>, extra: Partial<SimwebConfig>): Partial<SimwebConfig> {
  const b = Object.fromEntries(BEHAVIOURS.map((k) => [k, behaviours[k] ?? 0])) as Record<Behaviour, number>;
  const robots = Object.fromEntries(ROBOTS_KINDS.map((k) => [k, k === "empty" ? 1 : 0])) as SimwebConfig["robots"];
  return { behaviours: b, robots, crossHostShare: 0, unservedShare: 0, brokenShare: 0, ...extra };
}

/** Writes the config for `simweb --config` and returns the CLI args and the World it describes. */
export function writeSimConfig(file: string, cfg: Partial<SimwebConfig>, seed: number, hosts: number): { args: string[]; world: World } {
  writeFileSync(file, JSON.stringify(cfg));
  const args = ["--preset", "tiny", "--seed", String(seed), "--hosts", String(hosts), "--config", file];
  const world = new World(makeConfig({ preset: "tiny", ...cfg, seed, hosts }));
  return { args, world };
}

export function readSimLog(file: string): SimRequest[] {
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as SimRequest);
}

export function quantile(xs: number[], q: number): number {
  const a = [...xs].sort((x, y) => x - y);
  return a.length === 0 ? NaN : a[Math.min(a.length - 1, Math.floor(q * a.length))]!;
}
