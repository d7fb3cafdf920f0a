// Per-page CPU breakdown from V8 CPU profiles (.cpuprofile files written by --cpu-prof, one per
// process and per worker thread). Each sample's time goes to the first category found walking from
// the sampled frame towards the root, so native work (zlib, TLS, hashing) lands on its JS caller.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

// Ordered: the first pattern that matches a frame wins for that frame.
const CATEGORIES = [
  ["gc", (f) => f.functionName === "(garbage collector)"],
  // Piscina's worker blocks in Atomics.wait between tasks: asleep, not CPU.
  ["idle", (f) => f.functionName === "(idle)" || f.functionName === "atomicsWaitLoop"],
  ["native, not attributed to JS ((program): libuv, syscalls, TLS record I/O)", (f) => f.functionName === "(program)"],
  ["warc compression", (f) => /node:zlib|\/zlib\.js/.test(f.url) || /^(zlibBuffer|gzip|deflate|processChunk)/i.test(f.functionName) && /zlib/.test(f.url)],
  ["TLS", (f) => /_tls_wrap|node:tls|_tls_common|node:crypto.*Cipher/.test(f.url)],
  ["parse", (f) => /\/parse\/|htmlparser2|entities|\/url\/normalize|tldts|\/url\/scope/.test(f.url)],
  ["store (WARC/CDXJ/page log, no compression)", (f) => /\/store\//.test(f.url)],
  ["redis client", (f) => /ioredis|redis-parser|\/frontier\//.test(f.url)],
  ["fetch (undici, robots, HTTP)", (f) => /undici|\/fetch\/|robots-parser|node:_http|node:net|node:dns/.test(f.url)],
  ["ipc/json", (f) => /child_process|node:internal\/child_process|serialization/.test(f.url) || f.functionName === "parse" && f.url === "" || f.functionName === "stringify"],
  ["piscina thread messaging (structured clone of tasks and results)", (f) => /piscina|worker_threads|node:internal\/worker/.test(f.url)],
];

export function analyseProfiles(dir, pages) {
  const totals = {};
  let profiled = 0, idle = 0;
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  for (const f of files) {
    const prof = JSON.parse(readFileSync(join(dir, f), "utf8"));
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const catOf = new Map();
    const categorize = (id) => {
      if (catOf.has(id)) return catOf.get(id);
      const n = byId.get(id);
      let cat;
      for (const [name, test] of CATEGORIES) if (test(n.callFrame)) { cat = name; break; }
      if (cat === undefined) cat = parent.has(id) ? categorize(parent.get(id)) : "other";
      catOf.set(id, cat);
      return cat;
    };
    for (let i = 0; i < prof.samples.length; i++) {
      const dt = (prof.timeDeltas[i] ?? 0) / 1000; // ms
      const cat = categorize(prof.samples[i]);
      if (cat === "idle") { idle += dt; continue; }
      totals[cat] = (totals[cat] ?? 0) + dt;
      profiled += dt;
    }
  }
  const msPerPage = {};
  for (const [k, v] of Object.entries(totals).sort((a, b) => b[1] - a[1])) msPerPage[k] = Number((v / pages).toFixed(3));
  return { files: files.length, pages, profiledMs: profiled, idleMs: idle, msPerPage, share: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, Number((v / profiled).toFixed(3))])) };
}
