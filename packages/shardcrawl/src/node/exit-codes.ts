// Exit codes of `shardcrawl crawl` and `shardcrawl node`, by why the crawl ended. Scripts rely on
// them (docs/crawling.md "Exit codes"): 75 is sysexits' EX_TEMPFAIL, "try again later", which is what an
// exhausted upstream quota means -- the frontier is intact and a rerun continues it.
export type EndReason = "done" | "max-pages" | "signal" | "quota";

export const EXIT_CODES: Record<EndReason, number> = {
  done: 0,
  "max-pages": 0,
  signal: 130,
  quota: 75,
};

export function exitCodeFor(reason: EndReason): number {
  return EXIT_CODES[reason];
}

/** Why a run could not start (node/preflight.ts): each has its own code, from sysexits.h. */
export type StartupProblem = "seeds" | "seedUrls" | "out" | "port" | "redis";

export const STARTUP_EXIT_CODES: Record<StartupProblem, number> = {
  seedUrls: 65, // EX_DATAERR: the seed file holds no usable URL
  seeds: 66, // EX_NOINPUT: the seed file is missing or unreadable
  redis: 69, // EX_UNAVAILABLE: the Redis given by --redis refuses or does not answer
  port: 71, // EX_OSERR: the status port cannot be bound (in use, privileged, not our address)
  out: 73, // EX_CANTCREAT: the output folder cannot be written
};

/** A run that cannot start: the cause (one line) and what to do about it (one line). */
export class StartupError extends Error {
  readonly exitCode: number;
  constructor(readonly problem: StartupProblem, cause: string, readonly hint: string) {
    super(cause);
    this.exitCode = STARTUP_EXIT_CODES[problem];
  }
}
