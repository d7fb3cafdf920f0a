// Exit codes of `shardcrawl crawl` and `shardcrawl node`, by why the crawl ended. Scripts rely on
// them (README "Exit codes"): 75 is sysexits' EX_TEMPFAIL, "try again later", which is what an
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
