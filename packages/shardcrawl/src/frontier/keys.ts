// The Redis keyspace of one crawl on one node, listed here and nowhere else. Every key starts with
// the crawl prefix P (default "sc:"), so one Redis can hold several crawls. Only frontier/ builds
// key names (FrontierKeys below, and the Lua scripts in lua/, which compute the same names from P:
// the node's Redis is not a cluster); test/frontier/keyspace-owner.test.ts checks that no other
// source file spells one. Each script's "Touches" header lists the keys it reads and writes.
//
//   P h:<host>          hash   per-host state, one-letter fields to stay small with millions of hosts:
//                              o origin ("https://www.d1.test") of the host's first URL
//                              f requests in flight          n next allowed start (epoch ms)
//                              d delay override ms (robots Crawl-delay; absent = none)
//                              c concurrency override (absent = crawl default)
//                              q URLs queued (all tiers)     x pages fetched
//                              e failures (all classes)      e:<class> failures of one class
//                              r requeues (robots-first, retries)
//   P q<tier>:<host>    list   the host's queue for one tier (0 = highest .. MAX_TIER), FIFO:
//                              RPUSH at the tail, LPOP at the head, LPUSH to put work back first.
//                              Element (element.ts): packed (binary: path+query without its "/" in
//                              7-bit chars, depth and 1 of every 8 chars in the top bits), or
//                              "<depth byte>path+query-without-its-/", or "/path+query" or the full
//                              URL + "<depth byte>" or "\t<depth>[,<hops>[,<attempt>]]" when not all
//                              zero. Read queues as bytes (lrangeBuffer) and decode with decodeElement.
//   P ready             zset   hosts that may start a request, scored by the earliest start time;
//                              a host is here only with queued URLs and a free concurrency slot.
//   P leases            zset   lease id -> expiry (epoch ms)
//   P lease             hash   lease id -> "<host>\t<tier>\t<element>"; a lease id is "<seq>", or
//                              "<seq>@<owner>" when a named owner (a fetcher process) took it
//   P lo:<owner>        set    lease ids an owner holds (returned at once when it dies: release_owner.lua)
//   P leaseseq          string lease id counter
//   P aff               hash   host affinity (lease.lua): fetcher slot -> the last time it asked (lease call, start-up join, heartbeat; epoch ms); slots
//                              silent for 60 s drop out of the live list
//   P affv              string version of the live slot list; P h:<host> / P d:<domain> cache their
//                              rendezvous owner in fields ao (slot) and av (the version it was computed at)
//   P bf:params         string JSON Bloom parameters {m,k,segmentBits,seed,scheme,probe}, set once
//   P bf:<i>            string Bloom bits [i*segmentBits, (i+1)*segmentBits), allocated on init (stage 0)
//   P bf:plan           string the growing filter's stages, "m,k,n;..." (bloom.ts bloomStages), set once
//   P bf:grow           hash   s stages in use, c insertions into the newest, cap its capacity,
//                              c<i> insertions of earlier stage i (lua/bloom_lib.lua)
//   P bf<s>:<i>         string Bloom bits of stage s >= 1, segment i, allocated when the stage is added
//   P robots:<origin>   string JSON robots cache entry, with a TTL
//   P rcb               hash   origin -> bytes its robots cache entry is charged (lua/robots_set.lua: the
//                              cache's byte bound; the total is P stats robots:bytes)
//   P rco               zset   origin -> write number of its robots cache entry (oldest evicted first)
//   P pq                list   parse queue of page ids (LPUSH by fetchers, consumers take the right end)
//   P pg:<id>           hash   a fetched page: m = JSON metadata, and b = body bytes or, when the body
//                              waits in out/spool/, s = spool reference plus h/t/e = host, tier, element;
//                              w = when it entered the parse queue (epoch ms: the oldest item's age),
//                              z = body bytes, summed in stats parseBytes (the parse stage byte bound)
//   P pageseq           string page id counter
//   P pi:<consumer>     list   page ids a parse consumer has taken and not yet acknowledged
//   P pc                set    names of parse consumers that ever took a page (for recovery)
//   P pqt, P pqb        hash   page id -> enqueue time, body bytes: pg:<id> w and z as written before they
//                              were fields of the page (read and deleted for pages queued by that version)
//   P flowcfg           hash   flow-control settings written at open (lib.lua feedback, add_links, lease);
//                              pk = "host" | "domain" (politeness key)
//   P flow              hash   node-wide signals: tcap (memory governor's total cap), mem (epoch ms: the
//                              memory governor holds leasing until then), gnb (upstream
//                              pause until), stop (upstream quota exhausted: message), disk (output
//                              disk full: message; no leasing until cleared), ondisk
//                              (spilled URLs in files under out/spill/, not yet re-admitted),
//                              storage (epoch ms until which a parser's write buffer is full: slow
//                              storage), wbuf:<consumer> / wbpeak:<consumer> (write buffer bytes, peak)
//   P big               zset   hosts with >= 100 queued URLs, by queued count when last written (shedding
//                              victims; rewritten when the count moves by 1/8, host field bq); only the
//                              256 biggest are kept
//   P press             zset   hosts under back-off, scored by pressure (hard limit / limit x delay multiplier)
//   P spill             list   URLs shed in spill mode, "<host>\t<tier>\t<url+suffix>", drained to --out/spill/
//   P fetchtimes        list   recent fetch times (ms) of all the node's fetchers, newest first, capped:
//                              the shared sample of the lease TTL percentile (schedule/lease-ttl.ts)
//   P spillsize         hash   spill file name -> bytes of it committed (entries removed from P spill)
//   P spillpos          hash   spill file name -> entries of it re-admitted (readmit.lua advances it)
//   (host fields added by flow control: a adaptive concurrency, m delay multiplier, t last decrease,
//    w limit at the last decrease, b baseline latency ms, A URLs ever admitted, R retries;
//    bq the host's score in P big as last written, 0 = not there)
//   P shedlog           list   recently shed (drop mode) or refused-for-room URLs, newest first, at most
//                              SHED_LOG_MAX: "<epoch ms>\t<shed|dropped>:<host-full|frontier-full>\t<host>\t<url>"
//                              (read by `shardcrawl inspect url`; lib.lua shed_note)
//   P ro:<host>         hash   the host's robots.txt outage (frontier/robots-outages.ts, lua/defer_host.lua):
//                              o origin, f first failed try (epoch ms), t failed tries, nt next try
//                              (epoch ms), l last try (epoch ms), e last error "<class>: <detail>",
//                              pn the host's next allowed start as the last try left it (epoch ms)
//   P rdefer            zset   hosts waiting out a robots.txt outage, scored by their next try (epoch ms);
//                              their URLs stay queued (the crawl's end reports them as `deferred`)
//   P d:<domain>        hash   domain politeness (flowcfg pk = "domain"; a host's field k names its
//                              registrable domain): the clock and limits its hosts share: n next allowed
//                              start, f requests in flight, c concurrency override, a/m/t/w/b flow control
//                              (as a host's), r the one host of the domain now in P ready, s arrival counter
//   P dw:<domain>       zset   the domain's other hosts with queued URLs, waiting their turn (score: arrival)
//   (host field k: the host's politeness domain, set by add_links.lua in domain mode)
//   P held              zset   hosts held on their own while their domain goes on (host field hh: epoch ms,
//                              a robots.txt outage's next try, defer_host.lua), scored by hh; lease.lua
//                              puts due ones back into their domain's line (lib.lua wake_held)
//   P excl              hash   the site owners' opt-out list (frontier/exclusions.ts): pattern (a lower-case
//                              host name: that host and all under it; or a normalized http(s) URL prefix)
//                              -> JSON {kind: "host"|"url-prefix", reason, at (epoch ms)}. Survives restarts.
//   P exclv             string version of P excl, incremented on every change (processes poll it)
//   P tmp:excl          list   scratch list of exclude_purge.lua (rebuilds a queue without the excluded URLs)
//   P dh                hash   registrable domain -> hosts admitted under it (the hosts-per-domain cap,
//                              lib.lua add_links; counted from the first admission of each new host)
//   Continuous re-crawl schedule (schedule/recrawl/due-store.ts; recrawl_set_due.lua, recrawl_take_due.lua).
//   The per-page state is the page's record in P rp:<host> (schedule/recrawl/history-codec.ts format 3:
//   estimator summary, last visit, validators, next due, plan/hint flags, path); these keys index it:
//   P rq:<slot>         list   due entries of one time slot (slot = floor(due ms / slot length)): host id
//                              (u32 BE) + the record's key (8 bytes). An entry counts only while its record's
//                              next-due field lies in this slot (a page moved leaves its old entry, skipped when popped)
//   P rqs               zset   slots with entries, scored by slot number (planning reads the due ones only)
//   P rdue:<slot>, P rslots    the same index before format 3 (host id + path+query entries): converted and
//                              deleted when the schedule opens (due-store.ts convertLegacy)
//   P rhid              hash   host -> host id            P rhostn  string host id counter
//   P rhost             hash   host id -> "<host>\t<origin>" (an entry's URL = origin + path+query)
//   P rsched            hash   schedule state: slot (slot length ms, set once), mu (Lagrange multiplier of
//                              the plan), carry (budget carry; negative = debt of visits made outside the
//                              plan), pages (pages in the schedule), rv / rhint (stream ids read so far),
//                              layout (3 once the records and the index are in format 3)
//   P rprior            hash   group (host, or "*" for all) -> "n,sum,sumsq" of its pages' log change rates,
//                              decayed (the estimator's per-group prior)
//   P ip:<addr>         zset   --ip-concurrency: the node's requests in flight to one IP address (the address
//                              connected to): lease id -> lease expiry; expired members are dropped on acquire
//   P ipo:<owner>       set    "<addr>\t<lease id>" slots a fetcher holds (returned at once when it dies:
//                              release_owner.lua)
//   P scope:mode        string the crawl scope: "domains" | "hosts" | "any" (crawl-scope.ts; written at start)
//   P scope:keys        set    registrable domains (mode domains) or hosts (mode hosts) of the seeds
//   Per-URL re-crawl history (schedule/recrawl/history-store.ts, lua/record_visit.lua, the only script
//   called with KEYS: the five below):
//   P rp:<host>         hash   8-byte hash of path+query -> binary record with the path (history-codec.ts format 3)
//   P rh:<host>         hash   path+query -> record of format 1/2 (before format 3): read when P rp:<host> has
//                              none, moved to P rp:<host> by the next visit or when the schedule opens
//   P rm:<host>         hash   the host's re-crawl counters (fetches, changes, unchanged, not_modified,
//                              bytes, v_honoured, v_ignored, v_churning)
//   P rm                hash   the same counters for the whole node
//   P rv                stream visit outcomes (u url, c changed 1/0/-, t time, k cost), capped; the
//                              re-crawl loop reads it
//   P rhint             stream change hints from sitemaps and feeds (written by parsers, read by the re-crawl loop)
//   Re-crawl change detectors (schedule/recrawl/continuous-visits.ts writes, continuous-loop.ts reads):
//   P rlist:<host>      hash   listing item path -> digest of its summary as last read on a listing page
//   P rlisting          stream listing reads with the items whose summary changed (capped)
//   P rlists            zset   listing URL -> when it is next read (epoch ms)
//   P rfeeds            hash   host -> JSON list of its feed URLs
//   P rcharge           hash   robots -> robots.txt requests not yet charged to the re-crawl budget
//   P rfq               hash   URL queued at once from a feed or sitemap -> "0", then which of its copies was
//                              fetched first ("f" its own, "d" discovery): the other is dropped unfetched; cleared when full
//   Rehoming (queue-handover.ts, lua/rehome_trim.lua) walks P h:<host> and trims P q<tier>:<host>.
//   P stats             hash   counters (seeds, discovered, leased, fetched, failed, parsed, err:<class>,
//                              excluded (queued URLs removed by an exclusion), excluded:refused (links refused),
//                              dropped:<reason>, duplicates, seenCached (duplicates a parser's seen cache
//                              answered without Redis, also counted in duplicates) ...) and gauges (queued, hostsQueued)

export const DEFAULT_PREFIX = "sc:";
/** Entries kept in P shedlog (about 100 bytes each): enough to explain recent shedding, bounded under memory pressure. */
export const SHED_LOG_MAX = 1000;

export class FrontierKeys {
  constructor(readonly prefix: string = DEFAULT_PREFIX) {
    // A prefix must not be empty (keys of different crawls would collide with other data) nor
    // contain whitespace (it would make key names hard to use from redis-cli).
    if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) {
      throw new Error(`frontier: invalid key prefix ${JSON.stringify(prefix)} (expected 1-64 of [A-Za-z0-9_.:-])`);
    }
  }

  host(host: string): string { return `${this.prefix}h:${host}`; }
  queue(host: string, tier: number): string { return `${this.prefix}q${tier}:${host}`; }
  get ready(): string { return `${this.prefix}ready`; }
  get leases(): string { return `${this.prefix}leases`; }
  get leaseData(): string { return `${this.prefix}lease`; }
  leaseOwner(owner: string): string { return `${this.prefix}lo:${owner}`; }
  /** Host affinity's live fetcher slots (lease.lua). */
  get affinity(): string { return `${this.prefix}aff`; }
  get bloomParams(): string { return `${this.prefix}bf:params`; }
  bloomSegment(i: number): string { return `${this.prefix}bf:${i}`; }
  get bloomPlan(): string { return `${this.prefix}bf:plan`; }
  get bloomGrow(): string { return `${this.prefix}bf:grow`; }
  /** Segment i of stage s (s >= 1; stage 0 is bloomSegment). */
  bloomStageSegment(s: number, i: number): string { return `${this.prefix}bf${s}:${i}`; }
  robots(origin: string): string { return `${this.prefix}robots:${origin}`; }
  get parseQueue(): string { return `${this.prefix}pq`; }
  page(id: string): string { return `${this.prefix}pg:${id}`; }
  parseInFlight(consumer: string): string { return `${this.prefix}pi:${consumer}`; }
  get parseConsumers(): string { return `${this.prefix}pc`; }
  get stats(): string { return `${this.prefix}stats`; }
  get parseQueueTimes(): string { return `${this.prefix}pqt`; }
  get parseQueueBytes(): string { return `${this.prefix}pqb`; }
  get flowCfg(): string { return `${this.prefix}flowcfg`; }
  get flow(): string { return `${this.prefix}flow`; }
  get pressure(): string { return `${this.prefix}press`; }
  get spill(): string { return `${this.prefix}spill`; }
  get fetchTimes(): string { return `${this.prefix}fetchtimes`; }
  get spillSize(): string { return `${this.prefix}spillsize`; }
  get spillPos(): string { return `${this.prefix}spillpos`; }
  get shedLog(): string { return `${this.prefix}shedlog`; }
  robotsOutage(host: string): string { return `${this.prefix}ro:${host}`; }
  get robotsDeferred(): string { return `${this.prefix}rdefer`; }
  ipSlots(addr: string): string { return `${this.prefix}ip:${addr}`; }
  ipSlotsOf(owner: string): string { return `${this.prefix}ipo:${owner}`; }
  get exclusions(): string { return `${this.prefix}excl`; }
  get exclusionsVersion(): string { return `${this.prefix}exclv`; }
  politenessDomain(domain: string): string { return `${this.prefix}d:${domain}`; }
  domainWaiting(domain: string): string { return `${this.prefix}dw:${domain}`; }
  get domainHosts(): string { return `${this.prefix}dh`; }
  get recrawlState(): string { return `${this.prefix}rsched`; }
  get recrawlPriors(): string { return `${this.prefix}rprior`; }
  get recrawlSlots(): string { return `${this.prefix}rqs`; }
  recrawlDue(slot: number): string { return `${this.prefix}rq:${slot}`; }
  recrawlHistory(host: string): string { return `${this.prefix}rp:${host}`; }
  /** Before record format 3: records keyed by path, and the due index with paths. */
  legacyRecrawlHistory(host: string): string { return `${this.prefix}rh:${host}`; }
  get legacyRecrawlSlots(): string { return `${this.prefix}rslots`; }
  legacyRecrawlDue(slot: number | string): string { return `${this.prefix}rdue:${slot}`; }
  get legacyRecrawlHistoryPrefix(): string { return `${this.prefix}rh:`; }
  recrawlHostMetrics(host: string): string { return `${this.prefix}rm:${host}`; }
  get recrawlMetrics(): string { return `${this.prefix}rm`; }
  get recrawlOutcomes(): string { return `${this.prefix}rv`; }
  get recrawlHints(): string { return `${this.prefix}rhint`; }
  get recrawlHostIds(): string { return `${this.prefix}rhid`; }
  get recrawlHosts(): string { return `${this.prefix}rhost`; }
  get recrawlHostCounter(): string { return `${this.prefix}rhostn`; }
  recrawlListingItems(host: string): string { return `${this.prefix}rlist:${host}`; }
  get recrawlListingReads(): string { return `${this.prefix}rlisting`; }
  get recrawlListings(): string { return `${this.prefix}rlists`; }
  get recrawlFeeds(): string { return `${this.prefix}rfeeds`; }
  get recrawlCharges(): string { return `${this.prefix}rcharge`; }
  get recrawlFeedQueued(): string { return `${this.prefix}rfq`; }
  /** The host-history prefix the re-crawl loop scans (SCAN MATCH <this>*). */
  get recrawlHistoryPrefix(): string { return `${this.prefix}rp:`; }
  get scopeMode(): string { return `${this.prefix}scope:mode`; }
  get scopeKeys(): string { return `${this.prefix}scope:keys`; }
}
