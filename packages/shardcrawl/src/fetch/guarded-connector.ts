// The socket factory under undici's Agent. It decides WHERE a connection goes and refuses the
// forbidden ones before any socket exists:
//   URL host:port -> connect-to mapping -> IP literal | --resolve override | cached DNS
//   -> SSRF filter (unless allowPrivate) -> undici's own connector (TLS, connect timeout, sessions)
// SNI and certificate checks keep the URL's host name even when the connection goes elsewhere.
// It also records per-socket facts (remote IP, dns/connect/tls timings, HTTP version of the
// response) that undici does not expose to a dispatch handler.
import { isIP, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { TLSSocket, createSecureContext } from "node:tls";
import type { buildConnector as UndiciConnector } from "undici";
import { applyConnectTo, lookupOverride, type ConnectToRule, type ResolveOverride } from "./connect-to.js";
import type { DnsCache } from "./dns-cache.js";
import { blockReason } from "./ssrf.js";
import { buildConnector } from "./undici-parts.js";

/** Refused by the SSRF guard; never has a socket behind it. */
export class SsrfBlockedError extends Error {
  override name = "SsrfBlockedError";
  // Must not be UND_ERR_SOCKET/UND_ERR_INFO: undici treats those as retryable and would keep the request queued.
  readonly code = "SHARDCRAWL_SSRF_BLOCKED";
}

export type ConnectPhase = "dns" | "connect" | "tls";

/** What we know about a connect failure: the phase it happened in and the time spent. */
export interface ConnectFailureFacts {
  phase: ConnectPhase;
  dnsMs?: number;
  ip?: string;
}

/** What we know about an open connection. */
export interface SocketFacts {
  ip?: string;
  dnsMs?: number;
  connectMs?: number;
  tlsMs?: number;
  /** Requests written on this socket so far (connection timings belong to the first). */
  requestsSent: number;
  /** HTTP version of the latest response status line, e.g. "1.1". */
  httpVersion?: string;
  /** Set when a request was written and its status line not yet seen. */
  awaitingStatusLine: boolean;
  /** First bytes of the status line seen so far. */
  statusPrefix: string;
}

export interface GuardedConnectorOptions {
  connectTo: readonly ConnectToRule[];
  resolve: readonly ResolveOverride[];
  allowPrivate: boolean;
  dns: DnsCache;
  connectTimeoutMs: number;
  /** Trusted CA certificates (PEM); undefined = Node's default roots. */
  ca?: string[];
  /** TLS sessions kept for resumption, one per host name (oldest dropped first). */
  maxCachedSessions?: number;
  /** Incremented for every connection opened and every TLS handshake (see ConnectionCounters). */
  counters?: ConnectionCounters;
}

/** Running totals of what the connector opened; the fetcher exports them as metrics. */
export interface ConnectionCounters {
  /** TCP connections opened (HTTP and HTTPS). */
  opened: number;
  /** TLS handshakes that resumed no session (full handshakes). */
  tlsHandshakes: number;
  /** TLS handshakes that resumed a cached session. */
  tlsResumed: number;
}

export function newConnectionCounters(): ConnectionCounters {
  return { opened: 0, tlsHandshakes: 0, tlsResumed: 0 };
}

/**
 * Sessions are per host name, and a broad crawl comes back to a host only after visiting many
 * others: the cache must hold a session for every host in rotation or resumption never happens.
 * A TLS 1.3 session is about 1-2 KiB (it carries the peer certificate).
 */
export const DEFAULT_MAX_CACHED_SESSIONS = 10_000;

type Connector = (options: UndiciConnector.Options, callback: UndiciConnector.Callback) => void;

const socketFacts = new WeakMap<object, SocketFacts>();
const failureFacts = new WeakMap<object, ConnectFailureFacts>();

export function factsOfConnectError(err: unknown): ConnectFailureFacts | undefined {
  return typeof err === "object" && err !== null ? failureFacts.get(err) : undefined;
}

// Errors worth trying the host's next address for; anything slower (timeouts) is not retried.
const NEXT_ADDRESS_CODES = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);
const MAX_ADDRESSES_TRIED = 2;

export function createGuardedConnector(opts: GuardedConnectorOptions): Connector {
  const maxSessions = opts.maxCachedSessions ?? DEFAULT_MAX_CACHED_SESSIONS;
  const plain = buildConnector({ timeout: opts.connectTimeoutMs }) as unknown as Connector;
  // One secure context for every connection: given only `ca`, tls.connect builds a new context
  // per connection and parses every root certificate again (tens of ms of CPU per connection).
  // Made at the first HTTPS connection: parsing the roots costs a process ~70 ms an HTTP crawl never needs.
  // Sessions are kept here, not in undici's cache: undici hands its session to tls.connect, which
  // decodes it twice (in the socket's constructor and again after connecting), and decoding a
  // session parses the certificate inside it; we set it once (offerSession).
  let secure: Connector | undefined;
  const secureBase = (): Connector =>
    (secure ??= buildConnector({
      timeout: opts.connectTimeoutMs,
      maxCachedSessions: CAN_SET_SESSION ? 0 : maxSessions,
      secureContext: createSecureContext(opts.ca ? { ca: opts.ca } : {}),
    }) as unknown as Connector);
  const sessions = new SessionKeeper(maxSessions);
  const counters = opts.counters ?? newConnectionCounters();

  return (connectOpts, callback) => {
    const https = connectOpts.protocol === "https:";
    const urlHost = connectOpts.hostname;
    const urlPort = Number(connectOpts.port) || (https ? 443 : 80);
    const target = applyConnectTo(opts.connectTo, urlHost, urlPort);
    const started = performance.now();

    const fail = (err: Error, facts: ConnectFailureFacts) => {
      failureFacts.set(err, facts);
      callback(err, null);
    };

    resolveTarget(opts, target.host, target.port).then(
      ({ addresses, looked }) => {
        const dnsMs = looked ? performance.now() - started : undefined;
        const allowed = opts.allowPrivate ? addresses : addresses.filter((a) => blockReason(a) === null);
        if (allowed.length === 0) {
          const why = addresses.map((a) => `${a} (${blockReason(a) ?? "allowed"})`).join(", ");
          const via = target.host === urlHost.toLowerCase() ? "" : ` via ${target.host}`;
          fail(new SsrfBlockedError(`refused ${urlHost}:${urlPort}${via} -> ${why}`), { phase: "dns", dnsMs });
          return;
        }
        const attempt = (index: number) => {
          const ip = allowed[index] ?? "";
          const facts: SocketFacts = { ip, dnsMs, requestsSent: 0, awaitingStatusLine: false, statusPrefix: "" };
          let phase: ConnectPhase = "connect";
          const connectStart = performance.now();
          let connectedAt = connectStart;
          const servername = isIP(urlHost) === 0 ? urlHost : undefined;
          let socket: Socket | undefined;
          try {
            socket = (https ? secureBase() : plain)(
              {
                hostname: ip,
                host: urlHost,
                protocol: connectOpts.protocol,
                port: String(target.port),
                ...(servername !== undefined ? { servername } : {}),
                ...(connectOpts.localAddress ? { localAddress: connectOpts.localAddress } : {}),
                ...(connectOpts.httpSocket ? { httpSocket: connectOpts.httpSocket } : {}),
              },
              (err, sock) => {
                if (err) {
                  const code = (err as { code?: string }).code ?? "";
                  if (phase === "connect" && NEXT_ADDRESS_CODES.has(code) && index + 1 < Math.min(allowed.length, MAX_ADDRESSES_TRIED)) {
                    attempt(index + 1);
                    return;
                  }
                  fail(err, { phase, dnsMs, ip });
                  return;
                }
                counters.opened++;
                if (https) {
                  facts.tlsMs = performance.now() - connectedAt;
                  if ((sock as TLSSocket).isSessionReused()) counters.tlsResumed++;
                  else counters.tlsHandshakes++;
                }
                watchStatusLine(sock, facts);
                socketFacts.set(sock, facts);
                callback(null, sock);
              },
            ) as unknown as Socket | undefined;
          } catch (err) {
            fail(err instanceof Error ? err : new Error(String(err)), { phase, dnsMs, ip });
            return;
          }
          socket?.once("connect", () => {
            connectedAt = performance.now();
            facts.connectMs = connectedAt - connectStart;
            facts.ip = socket?.remoteAddress ?? ip;
            if (https) phase = "tls";
          });
          if (https && socket) {
            const key = servername ?? ip;
            offerSession(socket as TLSSocket, sessions.get(key));
            socket.on("session", (session: Buffer) => sessions.keep(key, session));
          }
        };
        attempt(0);
      },
      (err: unknown) =>
        fail(err instanceof Error ? err : new Error(String(err)), { phase: "dns", dnsMs: performance.now() - started }),
    );
  };
}

/**
 * The address a connection for this host and port tries first, as the connector picks it
 * (--connect-to, --resolve, the DNS cache, the private-address filter); undefined when none is
 * allowed. The per-IP in-flight limit keys on it before the request is sent (node/ip-slots.ts).
 * Rejects like a lookup (DnsLookupError).
 */
export async function firstTargetAddress(opts: Pick<GuardedConnectorOptions, "connectTo" | "resolve" | "dns" | "allowPrivate">, host: string, port: number): Promise<string | undefined> {
  const target = applyConnectTo(opts.connectTo, host, port);
  const { addresses } = await resolveTarget(opts as GuardedConnectorOptions, target.host, target.port);
  return (opts.allowPrivate ? addresses : addresses.filter((a) => blockReason(a) === null))[0];
}

async function resolveTarget(
  opts: GuardedConnectorOptions,
  host: string,
  port: number,
): Promise<{ addresses: string[]; looked: boolean }> {
  if (isIP(host) !== 0) return { addresses: [host], looked: false };
  const override = lookupOverride(opts.resolve, host, port);
  if (override !== undefined) return { addresses: override, looked: false };
  return { addresses: await opts.dns.resolve(host), looked: true };
}

/** TLSSocket's setSession (what tls.connect calls; not in the typings). */
type SessionSettable = TLSSocket & { setSession(session: Buffer): void };
/** Without it (another Node), sessions go through undici's cache as tls.connect options. */
const CAN_SET_SESSION = typeof (TLSSocket.prototype as Partial<SessionSettable>).setSession === "function";

/**
 * Offers a kept session for resumption on a TLS socket that is still connecting: its handshake
 * starts on the TCP connect, which is always later than this (what tls.connect does with its
 * `session` option, minus the second decoding).
 */
function offerSession(socket: TLSSocket, session: Buffer | undefined): void {
  if (!CAN_SET_SESSION || session === undefined || !socket.connecting) return;
  try {
    (socket as SessionSettable).setSession(session);
  } catch {
    // A session OpenSSL cannot decode: a full handshake instead.
  }
}

/**
 * The TLS sessions for resumption, one per host name (undici's own cache holds them behind
 * WeakRefs, which a garbage collection between two connections can empty, forcing a full
 * handshake): a bounded set of strong references; the oldest sessions go first.
 */
class SessionKeeper {
  private readonly sessions = new Map<string, Buffer>();
  constructor(private readonly max: number) {}

  get(key: string): Buffer | undefined {
    return this.sessions.get(key);
  }

  keep(key: string, session: Buffer): void {
    if (this.max <= 0) return;
    this.sessions.delete(key);
    if (this.sessions.size >= this.max) {
      const oldest = this.sessions.keys().next();
      if (!oldest.done) this.sessions.delete(oldest.value);
    }
    this.sessions.set(key, session);
  }
}

const STATUS_LINE = /^HTTP\/(\d(?:\.\d)?) /;
const STATUS_PREFIX_BYTES = 12;

/**
 * undici's HTTP/1 parser does not report the response's HTTP version, so we read it from the
 * status line as undici pulls bytes off the socket (it reads with socket.read() on 'readable').
 * Only the first bytes after each request are looked at; the data itself is not touched.
 */
function watchStatusLine(socket: Socket, facts: SocketFacts): void {
  const read = socket.read.bind(socket);
  socket.read = ((size?: number) => {
    const chunk: unknown = read(size);
    if (facts.awaitingStatusLine && Buffer.isBuffer(chunk) && chunk.length > 0) {
      facts.statusPrefix += chunk.subarray(0, STATUS_PREFIX_BYTES - facts.statusPrefix.length).toString("latin1");
      if (facts.statusPrefix.length >= STATUS_PREFIX_BYTES || facts.statusPrefix.includes("\n")) {
        facts.httpVersion = STATUS_LINE.exec(facts.statusPrefix)?.[1];
        facts.awaitingStatusLine = false;
      }
    }
    return chunk;
  }) as typeof socket.read;
}

/** Called when a request is written on `socket`: the next status line belongs to it. */
export function noteRequestSent(socket: object): SocketFacts | undefined {
  const facts = socketFacts.get(socket);
  if (facts) {
    facts.requestsSent++;
    facts.awaitingStatusLine = true;
    facts.statusPrefix = "";
    facts.httpVersion = undefined;
  }
  return facts;
}
