// Forks the node's fetcher and parser processes and restarts a crashed one with back-off.
// Children exit on their own when the IPC channel closes, so a killed supervisor leaves no orphans
// that keep crawling.
import { fork, type ChildProcess } from "node:child_process";
import { CONFIG_ENV } from "./config-env.js";
import type { NodeConfig } from "./config.js";

export type ChildRole = "fetcher" | "parser";

export interface ChildSpec {
  role: ChildRole;
  index: number;
  script: string;
}

export interface ChildMessage {
  type: "stats" | "stopped" | "log";
  [k: string]: unknown;
}

interface Slot {
  spec: ChildSpec;
  proc?: ChildProcess;
  restarts: number;
  lastStart: number;
  restartTimer?: NodeJS.Timeout;
  stopping: boolean;
}

export class ChildGroup {
  private readonly slots: Slot[] = [];
  /** Restarts done so far (for status and the final summary). */
  restarts = 0;

  constructor(
    private readonly config: NodeConfig,
    private readonly redisUrl: string,
    private readonly onMessage: (spec: ChildSpec, msg: ChildMessage) => void,
    private readonly log: (msg: string) => void,
    /**
     * Called on every exit of a child (crash, kill or stop), before any restart, with its pid;
     * `clean`: it exited by itself with code 0 (a stop it finished), not by a signal or an error.
     */
    private readonly onExit: (spec: ChildSpec, pid: number, clean: boolean) => void = () => undefined,
  ) {}

  start(specs: ChildSpec[]): void {
    for (const spec of specs) {
      const slot: Slot = { spec, restarts: 0, lastStart: 0, stopping: false };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  private spawn(slot: Slot): void {
    const restarted = slot.lastStart !== 0;
    slot.lastStart = Date.now();
    const env = {
      ...process.env,
      [CONFIG_ENV]: JSON.stringify(this.config),
      SHARDCRAWL_REDIS_URL: this.redisUrl,
      SHARDCRAWL_ROLE: slot.spec.role,
      SHARDCRAWL_INDEX: String(slot.spec.index),
      SHARDCRAWL_SUPERVISOR_PID: String(process.pid),
      ...(restarted ? { SHARDCRAWL_RESTARTED: "1" } : {}),
    };
    const proc = fork(slot.spec.script, [], { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    slot.proc = proc;
    proc.on("message", (m) => this.onMessage(slot.spec, m as ChildMessage));
    proc.on("exit", (code, signal) => {
      slot.proc = undefined;
      if (proc.pid !== undefined) this.onExit(slot.spec, proc.pid, code === 0 && signal === null);
      if (slot.stopping) return;
      // A child that lived a while gets a fresh back-off; one that keeps dying waits longer each time.
      if (Date.now() - slot.lastStart > 30_000) slot.restarts = 0;
      const delay = Math.min(30_000, 250 * 2 ** slot.restarts);
      slot.restarts++;
      this.restarts++;
      this.log(`${slot.spec.role} ${slot.spec.index} exited (code ${code}, signal ${signal}); restarting in ${delay} ms`);
      slot.restartTimer = setTimeout(() => this.spawn(slot), delay);
    });
  }

  pids(): Array<{ role: ChildRole; index: number; pid?: number }> {
    return this.slots.map((s) => ({ role: s.spec.role, index: s.spec.index, pid: s.proc?.pid }));
  }

  /** Asks children to finish what they hold and exit; kills what is still there after the grace time. */
  async stop(graceMs: number, roles?: ChildRole[]): Promise<void> {
    const slots = this.slots.filter((s) => !roles || roles.includes(s.spec.role));
    const exits = slots.map((s) => {
      s.stopping = true;
      if (s.restartTimer) clearTimeout(s.restartTimer);
      const p = s.proc;
      if (!p || p.exitCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const t = setTimeout(() => { p.kill("SIGKILL"); }, graceMs);
        p.once("exit", () => { clearTimeout(t); resolve(); });
        if (p.connected) p.send({ type: "stop" }, () => undefined);
        else p.kill("SIGTERM");
      });
    });
    await Promise.all(exits);
  }
}
