// Loads the Lua scripts in lua/ and runs them on an ioredis client as Redis functions: FCALL, and
// FUNCTION LOAD of the whole library once when Redis does not have it (a new Redis, or a new build).
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
import { Command, type Redis } from "../shared/cjs-ioredis.js";
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

/**
 * Scripts that may run when Redis is past its maxmemory (the Redis function flag allow-oom): all but
 * the intake of new URLs from outside, which Redis then refuses before it starts (nothing half done).
 * The rest must keep working so that pages already fetched are completed and parsed, which frees memory.
 */
const REFUSED_WHEN_OOM: ReadonlySet<ScriptName> = new Set(["add_links", "add_revisits"]);

interface Sources {
  /** Each script as a standalone EVAL script (helpers prepended), for tools and tests. */
  standalone: Map<ScriptName, string>;
  /** Every script as one Redis function library (FUNCTION LOAD), and each script's function name. */
  library: string;
  functions: Map<ScriptName, string>;
}

let sources: Sources | undefined;

/**
 * The scripts run as Redis functions (Redis >= 7.0): the helpers (lib.lua, bloom_lib.lua, ~100 local
 * functions) are compiled and defined once when the library is loaded. As EVAL scripts every call ran
 * their top level again: 80-110 k redis-server instructions per call (callgrind), 6-10% of Redis'
 * work per page. Each function starts with lib_begin(ARGV) (or bloom_begin), which sets the
 * call's values the helpers read. The library's name carries a hash of its text, so two builds on
 * one Redis never call each other's code.
 */
function loadSources(): Sources {
  if (sources) return sources;
  // Full-line comments are blanked (line numbers in Lua errors stay right): Redis keeps every
  // script's text in used_memory, and most scripts carry lib.lua and bloom_lib.lua.
  const read = (file: string) => readFileSync(new URL(file, LUA_DIR), "utf8").replace(/^[ \t]*--.*$/gm, "");
  const lib = read("lib.lua").replaceAll("__MAX_TIER__", String(MAX_TIER)).replaceAll("__SHEDLOG_MAX__", String(SHED_LOG_MAX));
  // The seen filter's growth comes first: lib.lua's add_links calls it.
  const bloomLib = read("bloom_lib.lua");
  const standalone = new Map<ScriptName, string>();
  const scripts = (Object.entries(SCRIPT_FILES) as Array<[ScriptName, boolean | "bloom"]>).map(([name, withLib]) => {
    const body = read(`${name}.lua`);
    const begin = withLib === "bloom" ? "bloom_begin(ARGV[1])" : withLib ? "lib_begin(ARGV)" : "";
    standalone.set(name, withLib === "bloom" ? `${bloomLib}\n${begin}\n${body}` : withLib ? `${bloomLib}\n${lib}\n${begin}\n${body}` : body);
    return { name, helpers: withLib === "bloom" ? "bloom" : withLib ? "lib" : "none", code: `${begin}\n${body}` };
  });
  const tag = createHash("sha1").update([bloomLib, lib, ...scripts.map((x) => `${x.name}\n${x.code}`)].join("\n")).digest("hex").slice(0, 12);
  const functions = new Map<ScriptName, string>(scripts.map((x) => [x.name, `sc${tag}_${x.name}`]));
  const register = (helpers: string) => scripts.filter((x) => x.helpers === helpers).map((x) =>
    `redis.register_function{function_name='${functions.get(x.name)}', flags={${REFUSED_WHEN_OOM.has(x.name) ? "" : "'allow-oom'"}}, callback=function(KEYS, ARGV)\n${x.code}\nend}`);
  // A script's function is placed after exactly the helpers its standalone form has, so a body sees
  // the same names either way (a script without lib.lua never meets one of lib.lua's locals).
  const library = [`#!lua name=shardcrawl_${tag}`, ...register("none"), bloomLib, ...register("bloom"), lib, ...register("lib"), ""].join("\n");
  sources = { standalone, library, functions };
  return sources;
}

function unknownCommand(err: unknown): boolean {
  return /unknown command/i.test(String((err as Error)?.message));
}

function isNoFunction(err: unknown): boolean {
  return /^ERR Function not found/i.test(String((err as Error)?.message));
}

/**
 * Runs the frontier's scripts on one client. Arguments are ARGV and the scripts build key names
 * from the prefix (see keys.ts); record_visit.lua alone takes KEYS (runWithKeys).
 */
export class Scripts {
  private readonly sources = loadSources();
  /** The library's FUNCTION LOAD in flight (see send). */
  private loading: Promise<void> | undefined;

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
    const fn = this.sources.functions.get(name);
    if (!fn) throw new Error(`frontier: no script ${name}`);
    const fcall = () => {
      this.corkForTurn();
      return this.redis.sendCommand(new Command("fcall", [fn, keys.length, ...keys, ...args], { replyEncoding }));
    };
    try {
      return await fcall();
    } catch (err) {
      if (!isNoFunction(err)) throw unknownCommand(err) ? new Error(`frontier: Redis >= 7.0 is needed (the scripts run as Redis functions): ${(err as Error).message}`) : err;
    }
    // One FUNCTION LOAD however many calls found the library missing at once (a new Redis).
    this.loading ??= this.loadLibrary().finally(() => (this.loading = undefined));
    await this.loading;
    return fcall();
  }

  /** Loads this build's library (another process may have loaded it meanwhile). */
  private async loadLibrary(): Promise<void> {
    try {
      await this.redis.call("FUNCTION", "LOAD", this.sources.library);
    } catch (err) {
      if (!/already exists/i.test(String((err as Error)?.message))) throw err;
    }
  }

  /**
   * Deletes other builds' libraries. A node's supervisor calls it as it opens the crawl (before its
   * children start): a node upgraded in place would otherwise keep every old library in its AOF, and
   * a tool of another build (inspect) may have loaded its own beside it. A process of another build
   * still running here finds its library gone at its next call and loads it again.
   */
  async dropOtherBuilds(): Promise<void> {
    const ours = /^#!lua name=(\S+)/.exec(this.sources.library)![1]!;
    const listed = (await this.redis.call("FUNCTION", "LIST", "LIBRARYNAME", "shardcrawl_*")) as unknown[][];
    for (const fields of listed) {
      const name = String(fields[fields.indexOf("library_name") + 1]);
      if (name !== ours && name.startsWith("shardcrawl_")) await this.redis.call("FUNCTION", "DELETE", name);
    }
  }

  /** A script as a standalone EVAL script (helpers prepended): what runs as this script's function. */
  source(name: ScriptName): string {
    const lua = this.sources.standalone.get(name);
    if (lua === undefined) throw new Error(`frontier: no script ${name}`);
    return lua;
  }

  /** The function library every script runs from (FUNCTION LOAD). */
  library(): string {
    return this.sources.library;
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
