// `shardcrawl exclude add|remove|list`: the site owners' opt-out list of one node, kept in its Redis
// (frontier/exclusions.ts). Works on a running node (its processes pick the change up within about a
// second) and on a stopped one (its Redis is started on its AOF for the change, like `inspect`).
// `add` also removes the queued URLs the new entry covers before it returns.
import { ExclusionList, FrontierKeys, Scripts, parseExclusionPattern, purgeExcluded, type Exclusion } from "../frontier/index.js";
import { openTarget } from "./inspect/node-target.js";
import { UsageError } from "./flags.js";

export interface ExcludeResult {
  action: "add" | "remove" | "list";
  node: string;
  entry?: Exclusion;
  /** add: queued URLs removed. */
  removed?: number;
  /** remove: whether the pattern was in the list. */
  found?: boolean;
  list?: Exclusion[];
}

export async function runExcludeCommand(v: { out?: string; redis?: string; reason?: string; json?: boolean }, pos: string[]): Promise<number> {
  const action = pos[0];
  if (action !== "add" && action !== "remove" && action !== "list") throw new UsageError(action === undefined ? "exclude: expected add, remove or list" : `exclude: unknown subcommand ${JSON.stringify(action)} (expected add, remove or list)`);
  const input = pos[1];
  if (action === "list" ? pos.length !== 1 : pos.length !== 2 || input === undefined) throw new UsageError(`exclude ${action}: ${action === "list" ? "takes no pattern" : "needs exactly one pattern"}`);
  if (!v.out && !v.redis) throw new UsageError("exclude: give --out <dir> or --redis <url>");
  if (input !== undefined) {
    try {
      parseExclusionPattern(input);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const target = await openTarget({ ...(v.out ? { out: v.out } : {}), ...(v.redis ? { redis: v.redis } : {}) }, "");
  try {
    const keys = new FrontierKeys(target.config.prefix);
    const list = new ExclusionList(target.redis, keys);
    const result: ExcludeResult = { action, node: target.node };
    if (action === "add") {
      result.entry = await list.add(input!, v.reason ?? "");
      const common = [keys.prefix, Date.now(), target.config.delayMs, target.config.hostConcurrency];
      result.removed = await purgeExcluded(target.redis, keys, new Scripts(target.redis), common, result.entry);
    } else if (action === "remove") {
      result.found = await list.remove(input!);
    } else {
      result.list = await list.all();
    }
    process.stdout.write(v.json ? `${JSON.stringify(result)}\n` : `${formatExcludeResult(result)}\n`);
    return action === "remove" && !result.found ? 3 : 0;
  } finally {
    await target.close();
  }
}

function formatEntry(e: Exclusion): string {
  return `${e.pattern}\t${e.kind}\t${new Date(e.at).toISOString()}\t${e.reason}`;
}

export function formatExcludeResult(r: ExcludeResult): string {
  if (r.action === "add") return `node ${r.node}: excluded ${r.entry!.pattern} (${r.entry!.kind}); ${r.removed} queued URLs removed`;
  if (r.action === "remove") return r.found ? `node ${r.node}: no longer excluded` : `node ${r.node}: not in the list`;
  return r.list!.length === 0 ? `node ${r.node}: no exclusions` : r.list!.map(formatEntry).join("\n");
}
