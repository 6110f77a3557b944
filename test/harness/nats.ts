import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { StopOptions } from "./artifacts.js";
import { canConnect, stablePort } from "./ports.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { startStack } from "./teardown.js";
import { toolPath } from "./tools.js";
import { waitFor } from "./wait-for.js";

/** Options for {@link startNats}. */
export interface NatsOptions {
  /** Tools directory; defaults to the one the global setup provided. */
  toolsDir?: string;
  /** Default true. Without it, a service's start-up waits for JetStream for as long as it runs. */
  jetStream?: boolean;
}

/** A running pinned nats-server with JetStream. */
export interface NatsServer {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** HTTP monitoring endpoint, e.g. for `/jsz` or `/varz`. */
  monitorUrl: string;
  logsDir: string;
  /** Stops the server (SIGTERM, so JetStream flushes) and waits until it is up again on the same port and store. */
  restart(): Promise<void>;
  /** Stops the server (SIGTERM) and leaves it down: an outage until {@link NatsServer.startAgain}. */
  stopServer(): Promise<void>;
  /** Starts a server stopped by {@link NatsServer.stopServer} on the same port and store. */
  startAgain(): Promise<void>;
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Starts the pinned nats-server from the tools directory (never the system's older one) with
 * JetStream on loopback, a free client port and a store under the artifact directory, and
 * resolves once it accepts connections and JetStream reports healthy.
 */
export async function startNats(options: NatsOptions = {}): Promise<NatsServer> {
  const binary = toolPath("nats-server", options.toolsDir);
  const jetStream = options.jetStream ?? true;
  return startStack("nats", async (teardown) => {
    const dir = teardown.dir;
    const storeDir = join(dir, "jetstream");
    mkdirSync(storeDir, { recursive: true });
    let proc: ManagedProcess | undefined;
    let generation = 0;
    teardown.add({ stop: async () => proc?.stop() });
    const port = await stablePort();
    const monitorPort = await stablePort();
    const monitorUrl = `http://127.0.0.1:${monitorPort}`;
    const launch = async () => {
      generation += 1;
      proc = startProcess({
        name: "nats-server",
        command: binary,
        args: [
          ...(jetStream ? ["-js"] : []),
          "-a",
          "127.0.0.1",
          "-p",
          String(port),
          "-m",
          String(monitorPort),
          "-sd",
          storeDir,
          "-n",
          "tenantplane-test",
        ],
        logPath: join(dir, `nats-server-${generation}.log`),
      });
      const running = proc;
      await waitFor(
        async () => {
          running.assertRunning();
          if (!(await canConnect("127.0.0.1", port))) return false;
          const res = await fetch(`${monitorUrl}/healthz${jetStream ? "?js-enabled-only=true" : ""}`);
          return res.ok;
        },
        {
          description: `nats-server on port ${port} to accept connections with JetStream`,
          timeoutMs: 30_000,
          intervalMs: 100,
        },
      );
    };
    await launch();
    return {
      url: `nats://127.0.0.1:${port}`,
      port,
      monitorUrl,
      logsDir: dir,
      async restart() {
        await proc?.stop();
        await launch();
      },
      async stopServer() {
        await proc?.stop();
      },
      startAgain: launch,
      stop: (stopOptions?: StopOptions) => teardown.stop(stopOptions),
    };
  });
}
