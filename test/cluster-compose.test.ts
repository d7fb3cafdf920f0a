// docker-compose.yml, statically: it parses and matches the process topology of its cluster file
// (deploy/cluster.compose.yaml): per node a Redis and a crawler service, the crawler running exactly
// that node of the cluster file, its status port published on loopback, its output and Redis data
// on named volumes, health checks; simweb and the exchange and verify tools. Running it for real
// (build, crawl, restart, down + up, verify) is scripts/compose-e2e.sh, which needs Docker.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ROOT } from "./harness/crawl.js";
import { loadClusterFile } from "../packages/shardcrawl/src/cli/cluster-file.js";

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  profiles?: string[];
}

const compose = parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8")) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const cluster = loadClusterFile(join(ROOT, "deploy/cluster.compose.yaml"));
const CLUSTER_MOUNT = "./deploy/cluster.compose.yaml:/etc/shardcrawl/cluster.yaml:ro";

describe("docker-compose.yml", () => {
  it("has exactly a Redis and a crawler per node of the cluster file, plus simweb, exchange and verify", () => {
    const expected = ["simweb", "exchange", "verify", ...cluster.nodes.flatMap((n) => [`redis-${n.name}`, `crawler-${n.name}`])];
    expect(Object.keys(compose.services).sort()).toEqual(expected.sort());
  });

  for (const node of cluster.nodes) {
    it(`runs ${node.name} as the process topology does`, () => {
      const crawler = compose.services[`crawler-${node.name}`]!;
      const redis = compose.services[`redis-${node.name}`]!;
      // The crawler runs this node of the mounted cluster file, with the image's shardcrawl entrypoint.
      expect(crawler.command).toEqual(["node", "--cluster", "/etc/shardcrawl/cluster.yaml", "--name", node.name]);
      expect(crawler.build).toEqual({ context: ".", dockerfile: "deploy/Dockerfile" });
      expect(crawler.volumes).toContain(CLUSTER_MOUNT);
      // Its Redis is its own service, healthy before it starts.
      expect(node.config.redis).toBe(`redis://redis-${node.name}:6379`);
      expect(crawler.depends_on?.[`redis-${node.name}`]).toEqual({ condition: "service_healthy" });
      expect(redis.command).toEqual(expect.arrayContaining(["--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"]));
      // PONG, not LOADING: redis-cli exits 0 on an error reply too.
      expect(redis.healthcheck?.test).toEqual(["CMD-SHELL", "redis-cli ping | grep -qx PONG"]);
      // Status port bound on all interfaces inside the container, published on the host's loopback only.
      expect(node.statusPort).toBeGreaterThan(0);
      expect(crawler.ports).toEqual([`127.0.0.1:${node.statusPort}:${node.statusPort}`]);
      expect(node.config.statusBind).toBe("0.0.0.0");
      // The health check asks /status itself, with the token, and wants a 200.
      const health = crawler.healthcheck!.test.join(" ");
      expect(health).toContain(`/dev/tcp/127.0.0.1/${node.statusPort}`);
      expect(health).toContain("GET /status HTTP/1.0");
      expect(health).toContain("Authorization: Bearer");
      expect(health).toContain("grep -q ' 200 '");
      // Output and Redis data on the node's own named volumes.
      expect(crawler.volumes).toContain(`${node.name}-out:${node.out}`);
      expect(redis.volumes).toEqual([`${node.name}-redis:/data`]);
      expect(compose.volumes).toHaveProperty(`${node.name}-out`);
      expect(compose.volumes).toHaveProperty(`${node.name}-redis`);
      // The exchange tool sees every node's output where the cluster file says it is.
      expect(compose.services.exchange!.volumes).toContain(`${node.name}-out:${node.out}`);
      expect(node.config.shard?.nodes.map((n) => n.name)).toEqual(cluster.nodes.map((n) => n.name));
    });
  }

  it("serves simweb where the nodes' connect-to rules send them, with the CA they trust", () => {
    const sim = compose.services.simweb!;
    const cmd = sim.entrypoint!.join(" ");
    for (const node of cluster.nodes) {
      for (const rule of node.config.connectTo) {
        const [, , host, port] = rule.split(":");
        expect(host).toBe("simweb");
        expect(cmd).toMatch(new RegExp(`--(https-)?port ${port}\\b`));
      }
      expect(node.config.caFile).toBe("/data/simweb/ca.pem");
      expect(cmd).toContain("--ca-dir /data/simweb");
      expect(node.config.seeds).toBe("/data/simweb/seeds.txt");
      expect(cmd).toContain("> /data/simweb/seeds.txt");
    }
    expect(compose.services.exchange!.entrypoint).toEqual(["bash", "scripts/cluster.sh"]);
  });

  it("verifies against the world simweb serves, with the nodes' user agent and delay", () => {
    const sim = compose.services.simweb!.entrypoint!.join(" ");
    const verify = compose.services.verify!.entrypoint!.join(" ");
    // simweb records its arguments; verify reads them back, so both see one world.
    expect(sim).toContain('echo "$$SIMWEB_ARGS" > /data/simweb/args');
    expect(verify).toContain("$$(cat /data/simweb/args)");
    expect(verify).toContain("--log /data/simweb/requests.jsonl");
    expect(sim).toContain("--log /data/simweb/requests.jsonl");
    for (const node of cluster.nodes) {
      expect(verify).toContain(`--user-agent '${node.config.userAgent}'`);
      expect(verify).toContain(`--min-gap-ms ${node.config.delayMs}`);
    }
    // A contact in the user agent, as every crawler's should carry.
    expect(cluster.nodes[0]!.config.userAgent).toMatch(/\(\+https:\/\//);
  });

  it("shares one status token among the nodes and the tools, never written into the repository", () => {
    for (const name of [...cluster.nodes.map((n) => `crawler-${n.name}`), "exchange"]) {
      const svc = compose.services[name] as Service & { environment?: Record<string, string> };
      expect(svc.environment?.SHARDCRAWL_STATUS_TOKEN_FILE).toBe("/run/shardcrawl/status-token");
      expect(svc.environment?.SHARDCRAWL_STATUS_TOKEN).toBe("${SHARDCRAWL_STATUS_TOKEN:-}");
      expect(svc.volumes?.some((m) => m.startsWith("status-token:/run/shardcrawl"))).toBe(true);
    }
    expect(compose.volumes).toHaveProperty("status-token");
  });

  it("builds from deploy/Dockerfile, whose entrypoint is the shardcrawl CLI", () => {
    const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "packages\/shardcrawl\/dist\/cli\/main\.js"\]/);
    expect(dockerfile).toMatch(/pnpm install --frozen-lockfile && pnpm build/);
  });
});
