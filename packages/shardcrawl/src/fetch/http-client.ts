// The crawler's HTTP client: an undici Pool per origin (keep-alive, pipelining 1, bounded connections
// per origin, TLS session reuse; origin-pools.ts) behind the guarded connector. fetch() never throws and never follows
// redirects; it returns the raw response as received (content-encoding kept) with hard caps on
// size and time, or a classified failure.
import diagnosticsChannel from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { rootCertificates } from "node:tls";
import type { Dispatcher } from "undici";
import type { FetchErrorClass, FetchTimings, FetchedPage } from "../shared/types.js";
import { parseConnectTo, parseResolve, type ConnectToRule, type ResolveOverride } from "./connect-to.js";
import { DnsCache, type LookupAll } from "./dns-cache.js";
import { OriginPools } from "./origin-pools.js";
import { classifyFetchError } from "./fetch-errors.js";
import {
  createGuardedConnector, firstTargetAddress, factsOfConnectError, newConnectionCounters, noteRequestSent, type ConnectionCounters, type SocketFacts,
} from "./guarded-connector.js";

export interface HttpTimeouts {
  /** TCP connect plus TLS handshake, per attempt. */
  connectMs: number;
  /** One DNS lookup (default: connectMs). */
  dnsMs: number;
  /** From request written to the end of the response headers. */
  headersMs: number;
  /** Idle time allowed between two body chunks. */
  bodyMs: number;
  /** Whole fetch, from the call to the last byte. */
  totalMs: number;
}

export interface HttpClientOptions {
  /** Sent as User-Agent on every request. */
  userAgent: string;
  /** Sent as From on every request when set (RFC 9110 10.1.2: an e-mail address for the operator). */
  from?: string;
  /** curl --connect-to rules, as strings "H1:P1:H2:P2" or parsed. */
  connectTo?: ReadonlyArray<string | ConnectToRule>;
  /** curl --resolve overrides, as strings "HOST:PORT:ADDR[,ADDR]" or parsed. */
  resolve?: ReadonlyArray<string | ResolveOverride>;
  /** Allow loopback/private/link-local destinations (tests, intranet crawls). Default false. */
  allowPrivate?: boolean;
  /** PEM file with extra trusted CA certificates, added to Node's default roots. */
  caFile?: string;
  timeouts?: Partial<HttpTimeouts>;
  /** Body bytes kept; the rest is not read (truncated: "length"). */
  maxBodyBytes?: number;
  /** Cap on the response header block (undici maxHeaderSize). */
  maxHeaderBytes?: number;
  dnsCacheTtlMs?: number;
  dnsNegativeTtlMs?: number;
  /** Clamp for record TTLs (resolvers that report them: --dns-server). */
  dnsMinTtlMs?: number;
  dnsMaxTtlMs?: number;
  /** Resolver calls in flight at once. */
  dnsConcurrency?: number;
  /** Resolver under the DNS cache (default dns.lookup). */
  dnsLookup?: LookupAll;
  acceptEncoding?: string;
  accept?: string;
  /** Parallel connections per origin (each origin's Pool size). */
  connectionsPerOrigin?: number;
  keepAliveTimeoutMs?: number;
  /** TLS sessions kept for resumption (one per host name). */
  tlsSessionCacheSize?: number;
}

export interface FetchInit {
  method?: "GET" | "HEAD";
  /** Extra request headers; they replace defaults of the same name. Host cannot be set. */
  headers?: ReadonlyArray<readonly [string, string]> | Record<string, string>;
  /** Per-request body cap (e.g. robots.txt reads 500 KiB whatever the page cap is). */
  maxBodyBytes?: number;
  /**
   * After a body is cut at maxBodyBytes, read and drop up to this many more bytes so the
   * connection can carry the host's next request (a cut that stops reading must close it, and a
   * new connection costs more CPU than the rest of a moderately larger page: about 1.3 ms per TLS
   * connection, session resumed, against under 0.1 ms per 100 KB read). Only worth it when the
   * connection will still be open at the host's next turn: the caller decides. 0 (default): stop.
   */
  drainBytes?: number;
  totalMs?: number;
  signal?: AbortSignal;
}

export interface FetchSuccess {
  ok: true;
  url: string;
  /** ISO 8601 time the fetch started. */
  fetchedAt: string;
  status: number;
  statusText: string;
  /** "1.1" or "1.0", from the status line. */
  httpVersion: string;
  /** Response headers in order, names as received. */
  headers: Array<[string, string]>;
  /** The request line actually written, e.g. "GET /a?b HTTP/1.1". */
  requestLine: string;
  /** Request headers actually written, in order. */
  requestHeaders: Array<[string, string]>;
  /** Body as received (content-encoding not removed), at most maxBodyBytes (joined on first read). */
  readonly body: Buffer;
  /** The body in the pieces it arrived in (what `body` joins), to write out without joining. */
  bodyPieces?: readonly Buffer[];
  truncated?: "length" | "time";
  /** When truncated: "time", which timer cut the body (body-timeout or total-timeout). */
  errorClass?: FetchErrorClass;
  detail?: string;
  /** For 3xx with a Location: the target resolved against the request URL. */
  location?: string;
  /** Remote IP actually connected to. */
  ip?: string;
  /** True when the request went over a connection opened earlier. */
  reusedConnection: boolean;
  timings: FetchTimings;
}

export interface FetchFailure {
  ok: false;
  url: string;
  fetchedAt: string;
  errorClass: FetchErrorClass;
  detail: string;
  ip?: string;
  timings: FetchTimings;
}

export type FetchOutcome = FetchSuccess | FetchFailure;

export interface HttpClient {
  fetch(url: string | URL, init?: FetchInit): Promise<FetchOutcome>;
  /** Closes idle connections and waits (briefly) for in-flight requests, then destroys the rest. */
  close(): Promise<void>;
  readonly dns: DnsCache;
  /** The address a request to `url` connects to first (per-IP limits; see firstTargetAddress). */
  addressOf(url: string | URL): Promise<string | undefined>;
  /** Connections opened and TLS handshakes (full vs resumed) since the client was made. */
  readonly connections: Readonly<ConnectionCounters>;
}

export const DEFAULT_TIMEOUTS: Omit<HttpTimeouts, "dnsMs"> = {
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  totalMs: 120_000,
};
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** How long an idle connection stays open for the origin's next request (undici keepAliveTimeout). */
export const DEFAULT_KEEP_ALIVE_MS = 4_000;
export const DEFAULT_MAX_HEADER_BYTES = 32 * 1024;
const DEFAULT_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8";
const CLOSE_GRACE_MS = 2_000;

export function createHttpClient(opts: HttpClientOptions): HttpClient {
  const timeouts: HttpTimeouts = { ...DEFAULT_TIMEOUTS, dnsMs: opts.timeouts?.connectMs ?? DEFAULT_TIMEOUTS.connectMs, ...opts.timeouts };
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const dns = new DnsCache({
    ttlMs: opts.dnsCacheTtlMs ?? 5 * 60_000,
    negativeTtlMs: opts.dnsNegativeTtlMs ?? opts.dnsCacheTtlMs ?? 60_000,
    timeoutMs: timeouts.dnsMs,
    ...(opts.dnsMinTtlMs !== undefined ? { minTtlMs: opts.dnsMinTtlMs } : {}),
    ...(opts.dnsMaxTtlMs !== undefined ? { maxTtlMs: opts.dnsMaxTtlMs } : {}),
    ...(opts.dnsConcurrency !== undefined ? { concurrency: opts.dnsConcurrency } : {}),
    ...(opts.dnsLookup ? { lookup: opts.dnsLookup } : {}),
  });
  const connections = newConnectionCounters();
  const targeting = {
    connectTo: (opts.connectTo ?? []).map((r) => (typeof r === "string" ? parseConnectTo(r) : r)),
    resolve: (opts.resolve ?? []).map((r) => (typeof r === "string" ? parseResolve(r) : r)),
    allowPrivate: opts.allowPrivate ?? false,
    dns,
  };
  const connector = createGuardedConnector({
    counters: connections,
    ...(opts.tlsSessionCacheSize !== undefined ? { maxCachedSessions: opts.tlsSessionCacheSize } : {}),
    ...targeting,
    connectTimeoutMs: timeouts.connectMs,
    ...(opts.caFile ? { ca: [...rootCertificates, readFileSync(opts.caFile, "utf8")] } : {}),
  });
  const keepAliveMs = opts.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_MS;
  const agent = new OriginPools({
    connect: connector,
    pipelining: 1,
    connections: opts.connectionsPerOrigin ?? 4,
    keepAliveTimeout: keepAliveMs,
    // A server's Keep-Alive: timeout=N hint may shorten our idle time but not lengthen it (undici
    // would keep a connection N - 2 s, up to 10 minutes): the drain decision (fetch-pipeline.ts)
    // counts on connections idle no longer than this.
    keepAliveMaxTimeout: keepAliveMs,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    maxHeaderSize: opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
  });
  const defaultHeaders: Array<[string, string]> = [
    ["user-agent", opts.userAgent],
    ["accept", opts.accept ?? DEFAULT_ACCEPT],
    ["accept-encoding", opts.acceptEncoding ?? "gzip, deflate, br"],
    ...(opts.from ? [["from", opts.from] as [string, string]] : []),
  ];

  return {
    dns,
    connections,
    addressOf: (url) => {
      const u = typeof url === "string" ? new URL(url) : url;
      return firstTargetAddress(targeting, u.hostname, Number(u.port) || (u.protocol === "https:" ? 443 : 80));
    },
    fetch: (url, init = {}) =>
      fetchOnce(agent, url, init, {
        defaultHeaders,
        defaultFlat: defaultHeaders.flat(),
        maxBodyBytes: init.maxBodyBytes ?? maxBodyBytes,
        drainBytes: init.drainBytes ?? 0,
        totalMs: init.totalMs ?? timeouts.totalMs,
      }),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), CLOSE_GRACE_MS)));
      const closed = await Promise.race([agent.close().then(() => "closed" as const), grace]);
      clearTimeout(timer);
      if (closed === "timeout") await agent.destroy();
    },
  };
}

interface FetchSettings {
  defaultHeaders: ReadonlyArray<[string, string]>;
  /** defaultHeaders as undici takes them (name, value, ...): most requests send only these. */
  defaultFlat: readonly string[];
  maxBodyBytes: number;
  drainBytes: number;
  totalMs: number;
}

function fetchOnce(agent: OriginPools, input: string | URL, init: FetchInit, settings: FetchSettings): Promise<FetchOutcome> {
  const started = performance.now();
  const fetchedAt = new Date().toISOString();
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return Promise.resolve(failure(String(input), fetchedAt, started, "url-invalid", `not a URL: ${String(input)}`));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve(failure(url.href, fetchedAt, started, "url-invalid", `unsupported scheme ${url.protocol}`));
  }
  let flatHeaders: string[];
  if (init.headers === undefined) {
    flatHeaders = settings.defaultFlat.slice();
  } else {
    const headers = mergeHeaders(settings.defaultHeaders, init.headers);
    if (headers.some(([name]) => name.toLowerCase() === "host")) {
      return Promise.resolve(failure(url.href, fetchedAt, started, "other", "the Host header cannot be overridden"));
    }
    flatHeaders = headers.flat();
  }

  return new Promise<FetchOutcome>((resolve) => {
    // With pipelining 1, undici hands a kept-alive connection to the next request only after a
    // full event-loop turn (a setImmediate queued after our end callback). Settling two turns
    // later lets an immediate follow-up fetch reuse the connection instead of opening another.
    const settle = (outcome: FetchOutcome) => setImmediate(() => setImmediate(() => resolve(outcome)));
    const handler = new ResponseCollector(url, fetchedAt, started, settings.maxBodyBytes, settle, settings.drainBytes);
    const onTotal = () => handler.stop("total-timeout", `total time over ${settings.totalMs} ms`);
    const timer = setTimeout(onTotal, settings.totalMs);
    const onAbort = () => handler.stop("other", "aborted by caller");
    init.signal?.addEventListener("abort", onAbort, { once: true });
    handler.onSettled = () => {
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
    };
    if (init.signal?.aborted) {
      onAbort();
      return;
    }
    try {
      agent.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? "GET",
          headers: flatHeaders,
        },
        handler,
      );
    } catch (err) {
      const { errorClass, detail } = classifyFetchError(err);
      handler.fail(errorClass, detail);
    }
  });
}

/** Defaults first, then extra headers; an extra header replaces every default of the same name. */
function mergeHeaders(
  defaults: ReadonlyArray<readonly [string, string]>,
  extra: FetchInit["headers"],
): Array<[string, string]> {
  const extraList: Array<[string, string]> = extra === undefined ? [] : Array.isArray(extra) ? extra.map(([k, v]) => [k, v] as [string, string]) : Object.entries(extra as Record<string, string>);
  const overridden = new Set(extraList.map(([k]) => k.toLowerCase()));
  return [...defaults.filter(([k]) => !overridden.has(k.toLowerCase())).map(([k, v]) => [k, v] as [string, string]), ...extraList];
}

function ms(value: number): number {
  return Math.round(value * 10) / 10;
}

function failure(url: string, fetchedAt: string, started: number, errorClass: FetchErrorClass, detail: string, extra: Partial<FetchFailure> = {}): FetchFailure {
  return { ok: false, url, fetchedAt, errorClass, detail, timings: { total: ms(performance.now() - started) }, ...extra };
}

// undici announces each request it writes, with the socket and the exact header block, on this
// channel, synchronously right after calling the handler's onRequestStart. We remember which
// collector just started so the announcement can be attributed to it.
const starting: { collector: ResponseCollector | null } = { collector: null };
diagnosticsChannel.subscribe("undici:client:sendHeaders", (message) => {
  const collector = starting.collector;
  starting.collector = null;
  if (collector === null) return;
  const { headers, socket } = message as { headers: string; socket: Socket };
  collector.noteSent(headers, socket);
});

/** Why we stop reading a body over the cap (one object: no stack trace captured per cut page). */
const BODY_CUT = new Error("body over the size cap: stopped reading");

/**
 * Aborts a response we cut on purpose. undici closes the socket with an error of its own, and
 * the stream's destroy() reads that error's stack: formatting a stack trace for every cut page
 * is wasted work (about a quarter of the pages are cut at 250 KB), so none is captured here.
 */
function abortWithoutStacks(controller: Dispatcher.DispatchController, reason: Error): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    controller.abort(reason);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A dispatch handler that collects one response under the size cap and settles exactly once. */
class ResponseCollector implements Dispatcher.DispatchHandler {
  onSettled: () => void = () => {};
  private settled = false;
  private controller: Dispatcher.DispatchController | null = null;
  private headerBlock = "";
  private facts: SocketFacts | undefined;
  private firstOnSocket = false;
  private status = 0;
  private statusText = "";
  private rawHeaders: Array<[string, string]> = [];
  private headersAt: number | undefined;
  private chunks: Buffer[] = [];
  private received = 0;
  /** Bytes read and dropped after the cut while draining (-1: not draining). */
  private drained = -1;
  /** Body bytes the response announced (Content-Length), when it did. */
  private announced: number | undefined;

  constructor(
    private readonly url: URL,
    private readonly fetchedAt: string,
    private readonly started: number,
    private readonly maxBodyBytes: number,
    private readonly resolve: (outcome: FetchOutcome) => void,
    private readonly drainBytes = 0,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.settled) {
      // Timed out or cancelled while queued for a connection: do not send it at all.
      controller.abort(new Error("request cancelled before it was sent"));
      return;
    }
    // undici may start a request again on a fresh connection after a keep-alive race; start clean.
    this.controller = controller;
    this.headerBlock = "";
    this.facts = undefined;
    starting.collector = this;
    queueMicrotask(() => {
      if (starting.collector === this) starting.collector = null;
    });
  }

  noteSent(headerBlock: string, socket: Socket): void {
    this.headerBlock = headerBlock;
    this.facts = noteRequestSent(socket);
    this.firstOnSocket = this.facts?.requestsSent === 1;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, _headers: unknown, statusMessage?: string): void {
    if (statusCode < 200 || this.settled) return; // 1xx interim responses (103 Early Hints) are skipped
    this.headersAt = performance.now();
    this.status = statusCode;
    this.statusText = statusMessage ?? "";
    this.rawHeaders = headerPairs(controller.rawHeaders);
    if (this.drainBytes > 0) {
      const length = this.rawHeaders.find(([k]) => k.toLowerCase() === "content-length")?.[1];
      if (length !== undefined && /^\d{1,15}$/.test(length.trim())) this.announced = Number(length.trim());
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.drained >= 0) {
      this.drained += chunk.length;
      if (this.drained > this.drainBytes) {
        this.succeed({ truncated: "length" });
        abortWithoutStacks(controller, BODY_CUT);
      }
      return;
    }
    const room = this.maxBodyBytes - this.received;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      const over = chunk.length - Math.max(room, 0);
      this.received += Math.max(room, 0);
      // Drain the rest when it is small enough (known length) or may be (unknown): the response
      // then ends normally and undici keeps the connection. Settled only at the end, so the
      // host's next request is still spaced from the end of this one.
      const rest = this.announced === undefined ? 0 : this.announced - this.received - over;
      if (this.drainBytes > 0 && over <= this.drainBytes && rest <= this.drainBytes - over) {
        this.drained = over;
        return;
      }
      this.succeed({ truncated: "length" });
      abortWithoutStacks(controller, BODY_CUT);
      return;
    }
    this.chunks.push(chunk);
    this.received += chunk.length;
  }

  onResponseEnd(): void {
    this.succeed(this.drained >= 0 ? { truncated: "length" } : {});
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    if (this.drained >= 0) {
      // The part we keep arrived whole; the error is in bytes we were only draining.
      this.succeed({ truncated: "length" });
      return;
    }
    const connectFacts = factsOfConnectError(err);
    const { errorClass, detail } = classifyFetchError(err, connectFacts?.phase);
    if (this.headersAt !== undefined && errorClass === "body-timeout") {
      // The body stalled: keep what arrived, say why it is short.
      this.succeed({ truncated: "time", errorClass, detail: `${detail} (after ${this.received} body bytes)` });
      return;
    }
    const bodyNote = this.headersAt !== undefined ? ` (after headers and ${this.received} body bytes)` : "";
    this.fail(errorClass, detail + bodyNote, connectFacts?.dnsMs, connectFacts?.ip);
  }

  /** Ends the fetch from outside (total timeout, caller abort). */
  stop(errorClass: FetchErrorClass, detail: string): void {
    if (this.settled) return;
    if (this.drained >= 0) {
      this.succeed({ truncated: "length" });
    } else if (this.headersAt !== undefined) {
      this.succeed({ truncated: "time", errorClass, detail: `${detail} (after ${this.received} body bytes)` });
    } else {
      this.fail(errorClass, detail);
    }
    this.controller?.abort(new Error(detail));
  }

  fail(errorClass: FetchErrorClass, detail: string, dnsMs?: number, ip?: string): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled();
    const timings: FetchTimings = { total: ms(performance.now() - this.started) };
    if (dnsMs !== undefined) timings.dns = ms(dnsMs);
    const out: FetchFailure = { ok: false, url: this.url.href, fetchedAt: this.fetchedAt, errorClass, detail, timings };
    const remote = ip ?? this.facts?.ip;
    if (remote) out.ip = remote;
    this.resolve(out);
  }

  private succeed(extra: Pick<FetchSuccess, "truncated" | "errorClass" | "detail">): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled();
    const facts = this.facts;
    const timings: FetchTimings = { total: ms(performance.now() - this.started) };
    if (this.firstOnSocket && facts) {
      if (facts.dnsMs !== undefined) timings.dns = ms(facts.dnsMs);
      if (facts.connectMs !== undefined) timings.connect = ms(facts.connectMs);
      if (facts.tlsMs !== undefined) timings.tls = ms(facts.tlsMs);
    }
    if (this.headersAt !== undefined) timings.ttfb = ms(this.headersAt - this.started);
    const { requestLine, requestHeaders } = parseHeaderBlock(this.headerBlock);
    const out: Omit<FetchSuccess, "body"> = {
      ok: true,
      url: this.url.href,
      fetchedAt: this.fetchedAt,
      status: this.status,
      statusText: this.statusText,
      httpVersion: facts?.httpVersion ?? "1.1",
      headers: this.rawHeaders,
      requestLine,
      requestHeaders,
      bodyPieces: this.chunks,
      reusedConnection: !this.firstOnSocket,
      timings,
      ...withoutUndefined(extra),
    };
    if (facts?.ip) out.ip = facts.ip;
    const location = this.status >= 300 && this.status < 400 ? resolveLocation(this.rawHeaders, this.url) : undefined;
    if (location !== undefined) out.location = location;
    this.resolve(withLazyBody(out, this.chunks, this.received));
  }
}

/** `body` joins the pieces on first read (a spooled page's never is: the spool writes the pieces). */
function withLazyBody(out: Omit<FetchSuccess, "body">, pieces: readonly Buffer[], bytes: number): FetchSuccess {
  let joined: Buffer | undefined = pieces.length === 1 && pieces[0]!.byteLength === bytes ? pieces[0] : undefined;
  return Object.defineProperty(out, "body", {
    get: () => (joined ??= Buffer.concat(pieces, bytes)),
    enumerable: true,
  }) as FetchSuccess;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** undici hands raw headers as alternating name/value Buffers; latin1 keeps every byte. */
function headerPairs(raw: Dispatcher.DispatchController["rawHeaders"]): Array<[string, string]> {
  if (!Array.isArray(raw)) return [];
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name: unknown = raw[i];
    const value: unknown = raw[i + 1];
    const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString("latin1") : String(v));
    pairs.push([text(name), text(value)]);
  }
  return pairs;
}

function parseHeaderBlock(block: string): { requestLine: string; requestHeaders: Array<[string, string]> } {
  const lines = block.split("\r\n").filter((l) => l !== "");
  const requestHeaders: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) requestHeaders.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { requestLine: lines[0] ?? "", requestHeaders };
}

function resolveLocation(headers: ReadonlyArray<[string, string]>, base: URL): string | undefined {
  const raw = headers.find(([name]) => name.toLowerCase() === "location")?.[1];
  if (raw === undefined || raw.trim() === "") return undefined;
  try {
    return new URL(raw.trim(), base).href;
  } catch {
    return undefined;
  }
}

/** A FetchedPage without its body: what a page with a spooled body sends through Redis. */
export function fetchedPageMeta(res: FetchSuccess, meta: { host: string; depth: number; hops: number }): Omit<FetchedPage, "body"> {
  const page: Omit<FetchedPage, "body"> = {
    url: res.url,
    host: meta.host,
    depth: meta.depth,
    hops: meta.hops,
    fetchedAt: res.fetchedAt,
    status: res.status,
    httpVersion: res.httpVersion,
    statusText: res.statusText,
    headers: res.headers,
    requestHeaders: res.requestHeaders,
    timings: res.timings,
  };
  if (res.ip !== undefined) page.ip = res.ip;
  if (res.truncated !== undefined) page.truncated = res.truncated;
  if (res.location !== undefined) page.redirectTo = res.location;
  return page;
}

/** The FetchedPage a successful fetch becomes (the caller adds the crawl bookkeeping). */
export function toFetchedPage(res: FetchSuccess, meta: { host: string; depth: number; hops: number }): FetchedPage {
  return { ...fetchedPageMeta(res, meta), body: res.body };
}
