// `shardcrawl exclude add|remove|list`: the site owners' opt-out list of one node, kept in its Redis
// (frontier/exclusions.ts). Works on a running node (its processes pick the change up within about a
// second) and on a stopped one (its Redis is started on its AOF for the change, like `inspect`).
// `add` also removes the queued URLs the new entry covers before it returns.
import { parseArgs } from "node:util";
import { ExclusionList, FrontierKeys, Scripts, parseExclusionPattern, purgeExcluded, type Exclusion } from "../frontier/index.js";
import { openTarget } from "./inspect/node-target.js";
import { UsageError } from "./flags.js";

export const EXCLUDE_USAGE = `usage: shardcrawl exclude add <domain|host|url-prefix> [--reason <text>] (--out <dir> | --redis <url>) [--json]
       shardcrawl exclude remove <domain|host|url-prefix> (--out <dir> | --redis <url>) [--json]
       shardcrawl exclude list (--out <dir> | --redis <url>) [--json]

The site owner's opt-out list of one node (scripts/cluster.sh exclude ... for every node of a cluster).
A name ("example.com", "shop.example.com") excludes that host and every host under it; an http(s)
URL excludes the URLs that start with it. Within about a second of "add" returning, the node starts
no new request to it; its queued URLs are removed (counted as "excluded") before "add" returns, and
links, redirects, seeds and inbox URLs to it are refused from then on. Kept in the node's Redis: it
survives restarts. A stopped node's Redis is started for the change and stopped again.

  --reason <text>   why (shown by "exclude list" and "inspect url")
  --json            one JSON object instead of text

exit codes: 0 done; 1 error; 2 usage error; 3 remove: the pattern was not in the list.
`;

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

export const EXCLUDE_OPTIONS = { out: { type: "string" }, redis: { type: "string" }, reason: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

export async function runExcludeCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, strict: true, allowPositionals: true,
      options: EXCLUDE_OPTIONS,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: v, positionals: pos } = parsed;
  if (v.help) {
    process.stdout.write(EXCLUDE_USAGE);
    return 0;
  }
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
