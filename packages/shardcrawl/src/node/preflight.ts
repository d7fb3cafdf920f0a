// What a node checks before it starts anything (its Redis, fetchers, parsers, the status server):
// the mistakes a user makes first -- a seed file that is not there, an --out it cannot write, a
// status port already taken, a Redis that refuses, seeds that are not URLs -- end the run with one
// line saying what is wrong and one saying what to do, and an exit code of their own
// (node/exit-codes.ts), instead of a stack trace, ioredis retrying forever, or a half-started node.
import { accessSync, constants, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";
import type { NodeConfig } from "./config.js";
import { StartupError } from "./exit-codes.js";
import { readSeedBatches, type SeedTally } from "./seeds.js";

const REDIS_PROBE_TIMEOUT_MS = 5_000;

/** A Redis URL with its password replaced, for messages. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "";
}

export function checkOutDir(out: string): void {
  const hint = "choose a folder you can write to with --out (or fix its permissions)";
  try {
    mkdirSync(out, { recursive: true });
    // A probe file: a folder can exist and still refuse writes (permissions, read-only mount).
    const probe = join(out, `.write-probe-${process.pid}`);
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (err) {
    // A full disk is not a mistake to refuse: the node starts and pauses fetching until space is back.
    if (errCode(err) === "ENOSPC") return;
    const why = { EACCES: "permission denied", EPERM: "not permitted", EROFS: "read-only file system", ENOTDIR: "a part of the path is a file, not a folder", EEXIST: "a file of that name is in the way" }[errCode(err)] ?? (err as Error).message;
    throw new StartupError("out", `cannot write to the output folder ${out}: ${why}`, hint);
  }
}

/**
 * Checks the seed file can be read and gives at least one URL when it has lines at all. Reads only
 * up to the first usable URL: the node streams the whole file later (node/seed-loading.ts).
 */
export async function checkSeeds(file: string, maxUrlLength: number, stripParams: readonly string[] = []): Promise<void> {
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
    accessSync(file, constants.R_OK);
  } catch (err) {
    const why = errCode(err) === "ENOENT" ? "no such file" : errCode(err) === "EACCES" ? "permission denied" : (err as Error).message;
    throw new StartupError("seeds", `cannot read the seed file ${file}: ${why}`, "check the --seeds path (one URL per line), or leave --seeds out to resume the crawl already in --out");
  }
  if (!isFile) throw new StartupError("seeds", `the seed file ${file} is not a file`, "give --seeds a text file with one URL per line");
  const tally: SeedTally = { accepted: 0, rejected: 0, firstRejected: [] };
  // The first batch of one ends the read (the generator closes the file).
  for await (const first of readSeedBatches(file, maxUrlLength, stripParams, tally, 1)) if (first.length) break;
  if (tally.accepted === 0 && tally.rejected > 0) {
    const first = tally.firstRejected[0]!;
    throw new StartupError("seedUrls", `no usable URL in the seed file ${file}: all ${tally.rejected} lines were rejected, the first at line ${first.line} (${first.reason}: ${first.text.slice(0, 120)})`, "write absolute http:// or https:// URLs, one per line (# starts a comment)");
  }
}

/** One line per rejected seed (the first few), with what to do; the other seeds are crawled. */
export function seedRejectionLines(file: string, seeds: SeedTally, max = 5): string[] {
  if (seeds.rejected === 0) return [];
  const lines = seeds.firstRejected.slice(0, max).map((r) => `seed rejected: ${file} line ${r.line}: ${r.reason}: ${r.text.slice(0, 200)}`);
  const more = seeds.rejected > max ? ` (${seeds.rejected - max} more not shown)` : "";
  lines.push(`${seeds.rejected} seed lines rejected${more}; the other ${seeds.accepted} seeds are crawled: fix or remove those lines and run again with the same --out to add them`);
  return lines;
}

export async function checkStatusPort(bind: string, port: number): Promise<void> {
  if (port === 0) return; // any free port
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const srv = createServer();
    srv.once("error", (e: NodeJS.ErrnoException) => resolve(e));
    srv.listen(port, bind, () => srv.close(() => resolve(null)));
  });
  if (!err) return;
  if (err.code === "EADDRINUSE") throw new StartupError("port", `the status port ${port} on ${bind} is in use (another node, or an earlier run still stopping?)`, "choose another --status-port, or 0 for any free port");
  if (err.code === "EACCES") throw new StartupError("port", `the status port ${port} on ${bind} needs privileges this user does not have`, "choose a --status-port above 1023, or 0 for any free port");
  if (err.code === "EADDRNOTAVAIL") throw new StartupError("port", `${bind} is not an address of this machine, so the status port cannot listen there`, "set statusBind to an address of this machine (127.0.0.1 by default)");
  throw new StartupError("port", `the status port ${port} on ${bind} cannot listen: ${err.message}`, "choose another --status-port, or 0 for any free port");
}

/** Connects once, without retries, and PINGs: a Redis given by --redis must answer before we start. */
export async function checkRedis(url: string): Promise<void> {
  const shown = redactRedisUrl(url);
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false, connectTimeout: REDIS_PROBE_TIMEOUT_MS, connectionName: "preflight" });
  // connect() itself rejects with "Connection is closed": the socket error says why.
  let socketError: unknown;
  redis.on("error", (e: unknown) => (socketError ??= e));
  try {
    await Promise.race([
      redis.connect().then(() => redis.ping()),
      new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })), REDIS_PROBE_TIMEOUT_MS).unref()),
    ]);
  } catch (thrown) {
    const err = socketError ?? thrown;
    const code = errCode(err);
    const msg = (err as Error).message;
    const own = "or leave --redis out and the node starts its own Redis under --out";
    if (code === "ECONNREFUSED") throw new StartupError("redis", `nothing answers at ${shown} (connection refused)`, `start Redis there, fix the address in --redis, ${own}`);
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") throw new StartupError("redis", `the host in ${shown} does not resolve`, `fix the host name in --redis, ${own}`);
    if (code === "ETIMEDOUT") throw new StartupError("redis", `Redis at ${shown} did not answer within ${REDIS_PROBE_TIMEOUT_MS / 1000} s`, "check the address and port in --redis and any firewall between");
    if (/^DENIED/.test(msg)) throw new StartupError("redis", `Redis at ${shown} refuses clients from other machines (protected mode)`, "give that Redis a password and put it in the URL (redis://:password@host:port), or on a private network start it with --protected-mode no");
    if (/^NOAUTH/.test(msg)) throw new StartupError("redis", `Redis at ${shown} wants a password`, "put it in the URL: redis://:password@host:port");
    if (/^WRONGPASS|invalid password/i.test(msg)) throw new StartupError("redis", `Redis at ${shown} refused the password in the URL`, "fix the password (and user name, if any) in --redis");
    if (/^LOADING/.test(msg)) throw new StartupError("redis", `Redis at ${shown} is still loading its data`, "wait until it has loaded, then run again");
    throw new StartupError("redis", `Redis at ${shown} refused: ${msg.split("\n")[0]}`, `check that --redis points at a Redis server, ${own}`);
  } finally {
    redis.disconnect();
  }
}

/** Everything above, in the order a user would want to hear about it. */
export async function preflight(config: NodeConfig): Promise<void> {
  if (config.seeds) await checkSeeds(config.seeds, config.maxUrlLength, config.stripParams);
  checkOutDir(config.out);
  await checkStatusPort(config.statusBind, config.statusPort);
  if (config.redis) await checkRedis(config.redis);
}
