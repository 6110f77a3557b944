import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";

/** A TCP port that was free on `host` a moment ago (bound to port 0, then released). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("could not read the bound port"))));
    });
  });
}

/**
 * A free TCP port on `host` below the kernel's ephemeral range, for a server that must get the
 * same port back after a restart. The kernel hands out ephemeral ports to every outgoing
 * connection and every bind to port 0 on the machine, so a port picked there can be taken
 * while its server is down (or between the pick and the bind) and the server then dies with
 * "address already in use"; no process gets a port below that range without asking for it.
 */
export async function stablePort(host = "127.0.0.1"): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const low = 10_000;
  const high = Math.max(low + 1_000, ephemeralLow) - 1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canBind(host, port)) return port;
  }
  throw new Error(`no free port on ${host} between ${low} and ${high} after 50 tries`);
}

/** The kernel's ephemeral port range (`net.ipv4.ip_local_port_range`), or Linux's default. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    // Not Linux: fall back to the Linux default.
  }
  return [32_768, 60_999];
}

async function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Resolves true when a TCP connection to `host:port` succeeds. */
export async function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
