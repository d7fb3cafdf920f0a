// Loads the Lua scripts in lua/ and runs them on an ioredis client: EVALSHA, and SCRIPT LOAD once
// when Redis answers NOSCRIPT (a new Redis, or after a SCRIPT FLUSH or a restart).
//
// The commands are sent as plain Commands, not through ioredis' defineCommand: on a client with
// enableAutoPipelining (the node's), every defined-command call builds a Pipeline object that
// copies every defined script and builtin onto itself (profiled in a crawl: ~0.1 ms per page
// across lease, complete, take and ack, a quarter of the Redis client's CPU), and every other
// auto-pipelined command paid for our 18 scripts in that copy too. A script call is written at
// once, like MULTI and other commands ioredis never auto-pipelines.
//
// This is the only way the code runs Lua: every script of the node lives in lua/ beside this
// file, and the build copies lua/ into dist/frontier/lua/ (scripts/copy-assets.mjs), so the
// scripts are read from beside the running module, src/ or dist/ alike. Scripts that touch host
// state get lua/lib.lua prepended, so shared logic (add links, release a lease, ready schedule)
// exists once yet each operation is still ONE script.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Command, type Redis } from "ioredis";
import { MAX_TIER } from "../shared/types.js";
import { SHED_LOG_MAX } from "./keys.js";

const LUA_DIR = new URL("./lua/", import.meta.url);

/** Script name -> whether it includes lib.lua ("bloom": bloom_lib.lua only; lib.lua scripts get bloom_lib.lua too). */
export const SCRIPT_FILES = {
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
  defer_host: true,
  wake_deferred: true,
  exclude_purge: true,
  ip_acquire: false,
  ip_release: false,
  take_pages: false,
  recover_parse: false,
  snapshot: false,
  bloom_test: "bloom",
  bloom_init: false,
  bloom_stages: false,
  recrawl_set_due: false,
  recrawl_take_due: false,
  record_visit: false,
  rehome_trim: false,
  robots_set: false,
} as const;

export type ScriptName = keyof typeof SCRIPT_FILES;
export type ScriptArg = string | number | Buffer;

let sources: Map<ScriptName, string> | undefined;

function loadSources(): Map<ScriptName, string> {
  if (sources) return sources;
  // Full-line comments are blanked (line numbers in Lua errors stay right): Redis keeps every
  // script's text in used_memory, and most scripts carry lib.lua and bloom_lib.lua.
  const read = (file: string) => readFileSync(new URL(file, LUA_DIR), "utf8").replace(/^[ \t]*--.*$/gm, "");
  const lib = read("lib.lua").replaceAll("__MAX_TIER__", String(MAX_TIER)).replaceAll("__SHEDLOG_MAX__", String(SHED_LOG_MAX));
  // The seen filter's growth comes first: lib.lua's add_links calls it.
  const bloomLib = read("bloom_lib.lua");
  const map = new Map<ScriptName, string>();
  for (const [name, withLib] of Object.entries(SCRIPT_FILES) as Array<[ScriptName, boolean | "bloom"]>) {
    const body = read(`${name}.lua`);
    map.set(name, withLib === "bloom" ? `${bloomLib}\n${body}` : withLib ? `${bloomLib}\n${lib}\n${body}` : body);
  }
  sources = map;
  return map;
}

function isNoScript(err: unknown): boolean {
  return String((err as Error)?.message).startsWith("NOSCRIPT");
}

interface Loaded {
  lua: string;
  sha: string;
}

let loaded: Map<ScriptName, Loaded> | undefined;

function loadScripts(): Map<ScriptName, Loaded> {
  if (loaded) return loaded;
  const map = new Map<ScriptName, Loaded>();
  for (const [name, lua] of loadSources()) map.set(name, { lua, sha: createHash("sha1").update(lua).digest("hex") });
  loaded = map;
  return map;
}

/**
 * Runs the frontier's scripts on one client. Arguments are ARGV and the scripts build key names
 * from the prefix (see keys.ts); record_visit.lua alone takes KEYS (runWithKeys).
 */
export class Scripts {
  private readonly scripts = loadScripts();
  /** SCRIPT LOADs in flight, by script (see send). */
  private readonly loading = new Map<ScriptName, Promise<unknown>>();

  constructor(private readonly redis: Redis) {
    // Lua computes key names from our own prefix; an ioredis keyPrefix would apply to direct
    // commands only and split the keyspace in two.
    if (redis.options.keyPrefix) throw new Error("frontier: use a Redis client without keyPrefix (the frontier has its own prefix)");
  }

  /** The socket is corked until the end of this turn of the event loop (see corkForTurn). */
  private corked = false;

  /**
   * Script calls made in one turn leave in one socket write: a parser acknowledges the pages of a
   * group commit together, and a write per call cost ~1.6 socket writes per page (stream and
   * syscall CPU in the client, a read per call in Redis). Uncorked before the next I/O.
   */
  private corkForTurn(): void {
    if (this.corked || this.redis.status !== "ready") return;
    const stream = this.redis.stream;
    this.corked = true;
    stream.cork();
    process.nextTick(() => {
      this.corked = false;
      stream.uncork();
    });
  }

  private async send(name: ScriptName, keys: string[], args: ScriptArg[], replyEncoding: "utf8" | null): Promise<unknown> {
    const script = this.scripts.get(name);
    if (!script) throw new Error(`frontier: no script ${name}`);
    const evalsha = () => {
      this.corkForTurn();
      return this.redis.sendCommand(new Command("evalsha", [script.sha, keys.length, ...keys, ...args], { replyEncoding }));
    };
    try {
      return await evalsha();
    } catch (err) {
      if (!isNoScript(err)) throw err;
    }
    // One SCRIPT LOAD however many calls met NOSCRIPT at once: a fetcher completing 64 leases at
    // start sent 64 EVALs of ~50 KB each, and Redis hashed every body (~0.1 ms of its CPU per page
    // over a 3,000-page crawl). EVAL stays the fallback if the cache is flushed again meanwhile.
    let load = this.loading.get(name);
    if (!load) {
      load = this.redis.script("LOAD", script.lua).finally(() => this.loading.delete(name));
      this.loading.set(name, load);
    }
    await load;
    try {
      return await evalsha();
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return this.redis.sendCommand(new Command("eval", [script.lua, keys.length, ...keys, ...args], { replyEncoding }));
    }
  }

  /** The full source of a script as it is sent (helpers prepended). */
  source(name: ScriptName): string {
    const script = this.scripts.get(name);
    if (!script) throw new Error(`frontier: no script ${name}`);
    return script.lua;
  }

  /** Runs a script; bulk replies come back as strings. */
  run(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    return this.send(name, [], args, "utf8");
  }

  /** Runs a script that names its keys in KEYS; bulk replies come back as strings. */
  runWithKeys(name: ScriptName, keys: string[], args: ScriptArg[]): Promise<unknown> {
    return this.send(name, keys, args, "utf8");
  }

  /** Runs a script; bulk replies come back as Buffers (for page bodies). */
  runBuffer(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    return this.send(name, [], args, null);
  }
}
