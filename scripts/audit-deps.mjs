#!/usr/bin/env node
// Dependency audit for CI: every package version in pnpm-lock.yaml is checked against the npm
// registry's bulk advisory endpoint (POST /-/npm/v1/security/advisories/bulk, the one `npm audit`
// uses). Written here because `pnpm audit` cannot be pointed at it reliably (it retries, and
// npm retired the endpoints older pnpm releases use) and because the machines this project runs on
// reach the registry through a proxy that allows only GET/HEAD (405 on any POST).
//
// Exit codes: 0 = no finding at the fail level in production dependencies, OR the advisory service
//   could not be asked (then a loud UNAUDITED banner says so: an unreachable endpoint must not
//   block CI, nor pass silently); 1 = findings at or above the fail level in production
//   dependencies (dev-only findings are listed but do not fail); 2 = bad usage or an unreadable lockfile.
// Usage: node scripts/audit-deps.mjs [--lockfile pnpm-lock.yaml] [--registry URL] [--fail-level high]
//                                    [--timeout-ms 20000] [--json]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
/* global fetch */
import semver from "semver";
import { parseAllDocuments } from "yaml";

export const SEVERITIES = ["info", "low", "moderate", "high", "critical"];

/** "name@1.2.3(peer@4)" or "@scope/name@1.2.3" -> { name, version } (null for link:/file: entries). */
export function splitKey(key) {
  const bare = key.split("(")[0];
  const at = bare.lastIndexOf("@");
  if (at <= 0) return null;
  const version = bare.slice(at + 1);
  return semver.valid(version) ? { name: bare.slice(0, at), version } : null;
}

/**
 * Reads a pnpm lockfile (v9, possibly several YAML documents) and returns the bulk-advisory request
 * ({ name: [versions] }) and the set of "name@version" reachable from the importers' dependencies
 * and optionalDependencies (production), as opposed to devDependencies and the package manager.
 */
export function auditRequestFromLock(text) {
  const docs = parseAllDocuments(text).map((d) => {
    if (d.errors.length) throw new Error(`lockfile: ${d.errors[0].message}`);
    return d.toJS() ?? {};
  });
  const request = new Map();
  const snapshots = new Map();
  for (const doc of docs) {
    for (const [key, snap] of Object.entries(doc.snapshots ?? {})) {
      snapshots.set(key, snap ?? {});
      const p = splitKey(key);
      if (!p) continue;
      if (!request.has(p.name)) request.set(p.name, new Set());
      request.get(p.name).add(p.version);
    }
  }
  const prod = new Set();
  const visit = (name, ref) => {
    const key = `${name}@${ref}`;
    const p = splitKey(key);
    if (!p || prod.has(`${p.name}@${p.version}`)) return;
    prod.add(`${p.name}@${p.version}`);
    const snap = snapshots.get(key) ?? snapshots.get(`${p.name}@${p.version}`) ?? {};
    for (const deps of [snap.dependencies, snap.optionalDependencies]) for (const [n, r] of Object.entries(deps ?? {})) visit(n, String(r));
  };
  for (const doc of docs) {
    for (const importer of Object.values(doc.importers ?? {})) {
      for (const deps of [importer?.dependencies, importer?.optionalDependencies]) {
        for (const [n, spec] of Object.entries(deps ?? {})) visit(n, String(spec?.version ?? spec));
      }
    }
  }
  return { request: Object.fromEntries([...request].map(([n, v]) => [n, [...v].sort()])), prod };
}

/** The advisories that really affect the versions we use (the endpoint may return more). */
export function findingsFrom(response, request, prod) {
  const findings = [];
  for (const [name, advisories] of Object.entries(response ?? {})) {
    for (const a of Array.isArray(advisories) ? advisories : []) {
      for (const version of request[name] ?? []) {
        const range = a.vulnerable_versions ?? "*";
        if (!semver.satisfies(version, range, { includePrerelease: true })) continue;
        findings.push({
          name, version, severity: SEVERITIES.includes(a.severity) ? a.severity : "info", title: String(a.title ?? ""),
          url: String(a.url ?? ""), range, production: prod.has(`${name}@${version}`),
        });
      }
    }
  }
  return findings.sort((x, y) => SEVERITIES.indexOf(y.severity) - SEVERITIES.indexOf(x.severity) || x.name.localeCompare(y.name));
}

/** POSTs the request; resolves { ok: true, body } or { ok: false, why } (never throws). */
export async function askRegistry(registry, request, timeoutMs) {
  const url = new URL("-/npm/v1/security/advisories/bulk", registry.endsWith("/") ? registry : `${registry}/`);
  try {
    const res = await fetch(url, {
      method: "POST", headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(request), signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) return { ok: false, why: `${url.href} answered HTTP ${res.status}${res.headers.get("allow") ? ` (allow: ${res.headers.get("allow")})` : ""}${text ? `: ${text.slice(0, 200)}` : ""}` };
    return { ok: true, body: JSON.parse(text) };
  } catch (err) {
    return { ok: false, why: `${url.href}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}` };
  }
}

async function main() {
  const { values: v } = parseArgs({
    options: {
      lockfile: { type: "string", default: "pnpm-lock.yaml" },
      registry: { type: "string", default: process.env.npm_config_registry || process.env.NPM_CONFIG_REGISTRY || "https://registry.npmjs.org/" },
      "fail-level": { type: "string", default: process.env.AUDIT_FAIL_LEVEL || "high" },
      "timeout-ms": { type: "string", default: "20000" },
      json: { type: "boolean", default: false },
    },
  });
  const failLevel = v["fail-level"];
  if (!SEVERITIES.includes(failLevel) && failLevel !== "none") {
    console.error(`audit: --fail-level must be one of ${SEVERITIES.join(", ")} or none`);
    return 2;
  }
  let parsed;
  try {
    parsed = auditRequestFromLock(readFileSync(v.lockfile, "utf8"));
  } catch (err) {
    console.error(`audit: cannot read ${v.lockfile}: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  const { request, prod } = parsed;
  const versions = Object.values(request).reduce((n, vs) => n + vs.length, 0);
  const answer = await askRegistry(v.registry, request, Number(v["timeout-ms"]));
  if (!answer.ok) {
    const bar = "!".repeat(78);
    console.log([bar, "!! DEPENDENCY AUDIT NOT DONE: the advisory service could not be asked.",
      `!! ${answer.why}`, `!! ${versions} package versions (${prod.size} in production) are UNAUDITED in this run.`,
      "!! Not failing CI for this; run `node scripts/audit-deps.mjs` where the registry accepts POST.", bar].join("\n"));
    if (v.json) console.log(JSON.stringify({ audited: false, why: answer.why, versions }));
    return 0;
  }
  const findings = findingsFrom(answer.body, request, prod);
  const failing = failLevel === "none" ? [] : findings.filter((f) => f.production && SEVERITIES.indexOf(f.severity) >= SEVERITIES.indexOf(failLevel));
  for (const f of findings) console.log(`${f.severity.padEnd(8)} ${f.production ? "prod" : "dev "} ${f.name}@${f.version} (${f.range}): ${f.title} ${f.url}`);
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, findings.filter((f) => f.severity === s).length]));
  console.log(`audit: ${versions} package versions checked (${prod.size} production); findings ${findings.length} ${JSON.stringify(bySeverity)}; failing (production, ${failLevel} and above): ${failing.length}`);
  if (v.json) console.log(JSON.stringify({ audited: true, versions, findings }));
  return failing.length > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
