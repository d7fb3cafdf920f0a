// The two pieces of undici the crawler uses, loaded by their own paths: undici's index also loads
// fetch, WebSocket, EventSource, caches, mocks and interceptors, about 50 ms of CPU at every
// fetcher start (68 ms for the index against 20 ms for these, measured on undici 7.30) for code
// the crawler never calls. Same classes as the index exports; types come from the index.
import { createRequire } from "node:module";
import type { Agent as UndiciAgent, buildConnector as UndiciBuildConnector } from "undici";

const require = createRequire(import.meta.url);

export const Agent = require("undici/lib/dispatcher/agent.js") as typeof UndiciAgent;
export const buildConnector = require("undici/lib/core/connect.js") as typeof UndiciBuildConnector;
