// Loads the Lua scripts in lua/ and registers them on an ioredis client with defineCommand
// (EVALSHA with a transparent EVAL fallback after a SCRIPT FLUSH or a Redis restart).
//
// The build copies only .ts files, so the .lua files are read from the source tree: from
// dist/frontier/ and from src/frontier/ alike, "../../src/frontier/lua/" resolves to
// packages/shardcrawl/src/frontier/lua/. Scripts that touch host state get lua/lib.lua prepended,
// so shared logic (add links, release a lease, ready schedule) exists once yet each operation is
// still ONE script.
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { MAX_TIER } from "../shared/types.js";
import { SHED_LOG_MAX } from "./keys.js";

const LUA_DIR = new URL("../../src/frontier/lua/", import.meta.url);

/** Script name -> whether it includes lib.lua. */
const SCRIPT_FILES = {
  add_links: true,
  lease: true,
  complete_page: true,
  complete_requeue: true,
  complete_failure: true,
  reap: true,
  release_owner: true,
  set_host_limits: true,
  readmit: true,
  ack_page: true,
  add_revisits: true,
  complete_revisit: true,
  refetch_page: true,
  take_pages: false,
  recover_parse: false,
  snapshot: false,
  bloom_test: false,
  bloom_init: false,
} as const;

export type ScriptName = keyof typeof SCRIPT_FILES;
export type ScriptArg = string | number | Buffer;

let sources: Map<ScriptName, string> | undefined;

function loadSources(): Map<ScriptName, string> {
  if (sources) return sources;
  const read = (file: string) => readFileSync(new URL(file, LUA_DIR), "utf8");
  const lib = read("lib.lua").replaceAll("__MAX_TIER__", String(MAX_TIER)).replaceAll("__SHEDLOG_MAX__", String(SHED_LOG_MAX));
  const map = new Map<ScriptName, string>();
  for (const [name, withLib] of Object.entries(SCRIPT_FILES) as Array<[ScriptName, boolean]>) {
    const body = read(`${name}.lua`);
    map.set(name, withLib ? `${lib}\n${body}` : body);
  }
  sources = map;
  return map;
}

/** Command names on the client are prefixed so they never clash with other modules' commands. */
const commandName = (name: ScriptName) => `shardcrawlFrontier_${name}`;
const defined = new WeakSet<Redis>();

// ioredis flattens one level of array arguments; passing the ARGV as ONE array avoids spreading
// tens of thousands of arguments onto the JS call stack.
type Command = (args: ScriptArg[]) => Promise<unknown>;

/** Runs the frontier's scripts on one client. All arguments are ARGV (no KEYS: see keys.ts). */
export class Scripts {
  constructor(private readonly redis: Redis) {
    // Lua computes key names from our own prefix; an ioredis keyPrefix would apply to direct
    // commands only and split the keyspace in two.
    if (redis.options.keyPrefix) throw new Error("frontier: use a Redis client without keyPrefix (the frontier has its own prefix)");
    if (defined.has(redis)) return;
    for (const [name, lua] of loadSources()) redis.defineCommand(commandName(name), { numberOfKeys: 0, lua });
    defined.add(redis);
  }

  private command(name: string): Command {
    const fn = (this.redis as unknown as Record<string, Command | undefined>)[name];
    if (typeof fn !== "function") throw new Error(`frontier: script ${name} is not defined on this client`);
    return fn.bind(this.redis);
  }

  /** Runs a script; bulk replies come back as strings. */
  run(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    return this.command(commandName(name))(args);
  }

  /** Runs a script; bulk replies come back as Buffers (for page bodies). */
  runBuffer(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    return this.command(`${commandName(name)}Buffer`)(args);
  }
}
