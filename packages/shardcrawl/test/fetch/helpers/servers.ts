// Small helpers for tests that run real servers on loopback.
import type { AddressInfo, Server, Socket } from "node:net";

/** Listens on host (default 127.0.0.1) on a free port; returns the port. */
export async function listen(server: Server, host = "127.0.0.1"): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Closes a server and destroys its open connections. */
export async function shutdown(server: Server): Promise<void> {
  const sockets = (server as Server & { __sockets?: Set<Socket> }).__sockets;
  for (const s of sockets ?? []) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Counts accepted TCP connections and keeps them so shutdown() can destroy them. */
export function trackConnections(server: Server, event: "connection" | "secureConnection" = "connection"): { count: () => number } {
  const sockets = new Set<Socket>();
  (server as Server & { __sockets?: Set<Socket> }).__sockets = sockets;
  let n = 0;
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    if (event === "connection") n++;
  });
  if (event === "secureConnection") server.on("secureConnection", () => n++);
  return { count: () => n };
}
