// Connection and TLS counters of one HTTP client, turned into increments of the node's stats hash
// (exported as shardcrawl_connections_opened_total, shardcrawl_tls_handshakes_total and
// shardcrawl_tls_session_reuses_total). A rising handshakes-to-pages ratio means keep-alive or
// session resumption stopped working.
import type { ConnectionCounters } from "./guarded-connector.js";

/** Stats-hash field of each counter. */
export const CONNECTION_STAT_FIELDS: Readonly<Record<keyof ConnectionCounters, string>> = {
  opened: "conn:opened",
  tlsHandshakes: "tls:handshakes",
  tlsResumed: "tls:resumed",
};

/** Remembers what was already reported, so each flush adds only what is new. */
export class ConnectionStatsReporter {
  private reported: ConnectionCounters = { opened: 0, tlsHandshakes: 0, tlsResumed: 0 };

  constructor(private readonly counters: Readonly<ConnectionCounters>) {}

  /** [stats field, increment] for every counter that moved since the last call. */
  take(): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    for (const key of Object.keys(CONNECTION_STAT_FIELDS) as Array<keyof ConnectionCounters>) {
      const delta = this.counters[key] - this.reported[key];
      if (delta !== 0) out.push([CONNECTION_STAT_FIELDS[key], delta]);
    }
    this.reported = { ...this.counters };
    return out;
  }
}
