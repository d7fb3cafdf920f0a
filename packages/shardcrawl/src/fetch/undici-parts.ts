// The pieces of undici the fetcher uses, loaded from their own files. undici's entry point
// loads every part of the package (fetch, WebSocket, caches, mocks, proxies, interceptors): ~0.2 s
// of CPU at every fetcher start for a Pool, a Client and a connector. They are CommonJS files of the pinned
// undici; if a version moves them, the entry point is used instead.
import { createRequire } from "node:module";
import type * as Undici from "undici";

const require = createRequire(import.meta.url);

function part<T>(file: string, fromEntry: (u: typeof Undici) => T): T {
  try {
    const value = require(file) as T;
    if (typeof value === "function") return value;
  } catch {
    // fall through to the entry point
  }
  return fromEntry(require("undici") as typeof Undici);
}

export const Client: typeof Undici.Client = part("undici/lib/dispatcher/client.js", (u) => u.Client);
export type Client = Undici.Client;
export const Pool: typeof Undici.Pool = part("undici/lib/dispatcher/pool.js", (u) => u.Pool);
export type Pool = Undici.Pool;
export const buildConnector: typeof Undici.buildConnector = part("undici/lib/core/connect.js", (u) => u.buildConnector);
