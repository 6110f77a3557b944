import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { stablePort } from "./ports.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

/** A running single-member etcd. */
export interface Etcd {
  url: string;
  process: ManagedProcess;
}

/** Starts the embedded etcd of the `cluster` binary with data under `dir`, waiting until it is healthy. */
export async function startEtcd(clusterBinary: string, dir: string, logsDir: string): Promise<Etcd> {
  const clientPort = await stablePort();
  const peerPort = await stablePort();
  const dataDir = join(dir, "etcd");
  mkdirSync(dataDir, { recursive: true });
  const url = `http://127.0.0.1:${clientPort}`;
  const proc = startProcess({
    name: "etcd",
    command: clusterBinary,
    args: [
      "etcd",
      "--data-dir",
      dataDir,
      "--listen-client-url",
      url,
      "--listen-peer-url",
      `http://127.0.0.1:${peerPort}`,
      "--log-level",
      "warn",
    ],
    logPath: join(logsDir, "etcd.log"),
  });
  try {
    await waitFor(
      async () => {
        proc.assertRunning();
        const res = await fetch(`${url}/health`);
        const body = (await res.json()) as { health?: string };
        return body.health === "true";
      },
      { description: `etcd health at ${url}`, timeoutMs: 60_000, intervalMs: 200 },
    );
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { url, process: proc };
}
