// Starts simweb for a test: as a real process from the built CLI (what crawler integration tests
// use), or in-process (cheaper, for tests that need the World or a simulated clock).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { makeConfig, startSimweb, type Clock, type RunningSimweb, type SimwebConfig } from "../../packages/simweb/src/index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = join(ROOT, "packages/simweb/dist/cli.js");

export interface SimwebProcess {
  http: number;
  https: number;
  /** Path of the CA certificate (PEM) that signs every https host. */
  ca: string;
  hosts: number;
  logFile: string;
  proc: ChildProcess;
  /** SIGTERM, wait for exit (the log is flushed on exit). */
  stop(): Promise<void>;
}

export interface SimwebProcessOptions {
  preset?: string;
  seed?: number;
  hosts?: number;
  extraArgs?: string[];
  logFile?: string;
  /** Max ms to wait for the JSON line. */
  startTimeoutMs?: number;
}

/** Spawns `node packages/simweb/dist/cli.js serve ...` (build first) and waits for its JSON line. */
export async function startSimwebProcess(opts: SimwebProcessOptions = {}): Promise<SimwebProcess> {
  const dir = mkdtempSync(join(tmpdir(), "simweb-test-"));
  const logFile = opts.logFile ?? join(dir, "requests.jsonl");
  const args = [CLI, "serve", "--preset", opts.preset ?? "tiny", "--log", logFile, "--ca-dir", join(dir, "ca")];
  if (opts.seed !== undefined) args.push("--seed", String(opts.seed));
  if (opts.hosts !== undefined) args.push("--hosts", String(opts.hosts));
  args.push(...(opts.extraArgs ?? []));
  const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (b: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += b.toString();
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`simweb did not start in time; stderr: ${stderr}`)), opts.startTimeoutMs ?? 30_000);
    const rl = createInterface({ input: proc.stdout! });
    rl.once("line", (l) => {
      clearTimeout(timer);
      resolveLine(l);
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`simweb exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  const info = JSON.parse(line) as { http: number; https: number; ca: string; hosts: number };
  return {
    ...info,
    logFile,
    proc,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** In-process simweb on free loopback ports, with its own temp log and CA directory. */
export async function startSimwebInProcess(opts: { config?: Partial<SimwebConfig> & { preset?: string }; clock?: Clock; log?: boolean } = {}): Promise<RunningSimweb & { logFile: string | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), "simweb-test-"));
  const logFile = opts.log === false ? undefined : join(dir, "requests.jsonl");
  const sim = await startSimweb({ config: makeConfig({ preset: "tiny", ...opts.config }), clock: opts.clock, logFile, caDir: join(dir, "ca") });
  return { ...sim, logFile };
}
