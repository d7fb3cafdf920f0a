// A starting node's fetchers wait for each other before their first lease. Host affinity hands a
// host to the fetcher its rendezvous hash names among the fetchers that are asking; the first
// fetcher up would otherwise lease hosts that belong to fetchers still loading, and each such host
// would then pay a second DNS lookup and a second full TLS handshake on its owner. Bounded: a
// fetcher that does not come up within the wait is left out (its hosts go to the others, and come
// back to it when it asks). A restarted fetcher does not wait: the others are already leasing.

export interface AwaitFetchersDeps {
  /** Marks this fetcher as asking; returns how many are asking now, itself included. */
  join(): Promise<number>;
  fetchers: number;
  maxWaitMs: number;
  pollMs: number;
  isStopping(): boolean;
  sleep(ms: number): Promise<void>;
  now?: () => number;
}

/** Returns how many fetchers were asking when the wait ended. */
export async function awaitFetchers(d: AwaitFetchersDeps): Promise<number> {
  const now = d.now ?? (() => Date.now());
  const end = now() + d.maxWaitMs;
  for (;;) {
    const asking = await d.join();
    if (asking >= d.fetchers || now() >= end || d.isStopping()) return asking;
    await d.sleep(d.pollMs);
  }
}
