// `shardcrawl status --cluster <file> --serve`: the cluster page. Polls every node's /status (the
// same bounded request as the status table), keeps a short history of the cluster's totals for the
// charts, and serves the page (node/ui/cluster.html) and its data (/cluster) on its own port.
// Loopback by default; any other bind needs SHARDCRAWL_STATUS_TOKEN, as the nodes do.
import type { ClusterSpec } from "./cluster-file.js";
import { fetchStatusBody, type StatusBody } from "./node-status-client.js";
import { History, type HistorySample } from "../node/history.js";
import { UI_ROUTES, serveRoutes, tokenForBind, type StatusServer } from "../node/status-server.js";
import { uiAsset } from "../node/ui-assets.js";

export interface ClusterNodeView {
  node: string;
  up: boolean;
  error?: string;
  status?: StatusBody;
}

export interface ClusterView {
  name: string;
  at: number;
  nodes: ClusterNodeView[];
  /** The cluster's totals over time (sums over the nodes that answered). */
  history: HistorySample[];
}

/** Sums the nodes that answered into one sample (a down node adds nothing). */
export function clusterSample(nodes: ClusterNodeView[], t: number): HistorySample {
  const sum: HistorySample = { t, fetched: 0, parsed: 0, failed: 0, queued: 0, leases: 0, parseQueue: 0, blockedMs: {} };
  for (const n of nodes) {
    const s = n.status?.stats;
    if (!n.up || !s) continue;
    sum.fetched += s.fetched ?? 0;
    sum.parsed += s.parsed ?? 0;
    sum.failed += s.failed ?? 0;
    sum.queued += s.queued ?? 0;
    sum.leases += s.leases ?? 0;
    sum.parseQueue += (s.parseQueue ?? 0) + (s.parseInFlight ?? 0);
  }
  return sum;
}

export class ClusterWatch {
  private readonly history = new History(360);
  private nodes: ClusterNodeView[] = [];
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly cluster: ClusterSpec,
    private readonly timeoutMs: number,
  ) {}

  async poll(): Promise<void> {
    const results = await Promise.all(this.cluster.nodes.map((n) => fetchStatusBody(n, this.timeoutMs)));
    this.nodes = results.map((r, i) => (r.ok ? { node: this.cluster.nodes[i]!.name, up: true, status: r.body } : { node: this.cluster.nodes[i]!.name, up: false, error: r.error }));
    this.history.push(clusterSample(this.nodes, Date.now()));
  }

  /** Polls every pollMs (one poll at a time: a slow node cannot pile requests up). */
  start(pollMs: number): Promise<void> {
    const loop = () => {
      this.polling = this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, pollMs);
      });
    };
    loop();
    return this.polling;
  }

  view(): ClusterView {
    return { name: this.cluster.name, at: Date.now(), nodes: this.nodes, history: this.history.all() };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
  }
}

export async function serveClusterPage(cluster: ClusterSpec, opts: { bind: string; port: number; timeoutMs: number; pollMs: number }): Promise<StatusServer> {
  const token = tokenForBind(opts.bind);
  const watch = new ClusterWatch(cluster, opts.timeoutMs);
  await watch.start(opts.pollMs);
  const server = await serveRoutes({
    bind: opts.bind,
    port: opts.port,
    token,
    routes: {
      "/": () => ({ type: "text/html; charset=utf-8", body: uiAsset("cluster.html") }),
      ...UI_ROUTES,
      "/cluster": () => ({ type: "application/json", body: JSON.stringify(watch.view()) }),
    },
  });
  return {
    port: server.port,
    close: async () => {
      await watch.stop();
      await server.close();
    },
  };
}
