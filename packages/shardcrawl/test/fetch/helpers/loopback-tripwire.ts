// A test-only tripwire: any attempt in this process to open a TCP connection to a non-loopback
// address throws before a packet is sent, and every attempted destination is recorded. Tests
// that exercise the SSRF guard use it to prove "no connection attempted" without risking one.
import net from "node:net";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/i;

export interface Tripwire {
  attempts: string[];
  uninstall(): void;
}

export function installLoopbackTripwire(): Tripwire {
  // Read without binding: we call it later with the connecting socket as `this`.
  const original = Reflect.get(net.Socket.prototype, "connect") as unknown as (...a: unknown[]) => net.Socket;
  const attempts: string[] = [];
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    const opts = (Array.isArray(first) ? first[0] : first) as { host?: string; port?: number; path?: string } | number | string;
    if (typeof opts === "object" && opts !== null && opts.path === undefined) {
      const host = opts.host ?? "localhost";
      attempts.push(`${host}:${opts.port}`);
      if (!LOOPBACK.test(host)) throw new Error(`tripwire: test tried to connect to non-loopback ${host}`);
    }
    return original.apply(this, args);
  } as typeof net.Socket.prototype.connect;
  return {
    attempts,
    uninstall: () => {
      net.Socket.prototype.connect = original as typeof net.Socket.prototype.connect;
    },
  };
}
