import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createArtifactsDir, releaseArtifactsDir, type StopOptions } from "./artifacts.js";
import { stablePort } from "./ports.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The tenantplane services the harness can run, by their directory under services/. */
export type ServiceName = "watcher" | "provisioner" | "isolation" | "recorder" | "sync-worker";

/** A running tenantplane service process with its health port. */
export interface RunningService {
  readonly name: string;
  readonly process: ManagedProcess;
  readonly httpPort: number;
  /** GET on the service's own HTTP port; resolves with the status code. */
  probe(path: "/healthz" | "/readyz" | "/metrics"): Promise<{ status: number; body: string }>;
  /** SIGTERM and wait (graceful shutdown). */
  stop(): Promise<void>;
  /** SIGKILL: a crash, no shutdown code runs. */
  kill(): Promise<void>;
}

/**
 * What a service runs from: `bundle` is services/<name>/dist/bundle/main.js, what the image
 * runs; `modules` is the unbundled tsc output beside it (bench/footprint.ts compares the two).
 */
export type ServiceEntry = "bundle" | "modules";

/** Runs built tenantplane services as real processes against a host cluster and a NATS server. */
export class ServiceFleet {
  readonly logsDir = createArtifactsDir("services");
  private readonly running = new Set<RunningService>();
  private counter = 0;

  constructor(
    private readonly base: {
      kubeconfigPath: string;
      natsUrl: string;
      env?: NodeJS.ProcessEnv;
      /** Default `bundle`. */
      entry?: ServiceEntry;
    },
  ) {}

  /** Starts `name` (from services/<name>/dist) and resolves once /healthz answers. */
  async start(name: ServiceName, env: NodeJS.ProcessEnv = {}): Promise<RunningService> {
    const entry = this.base.entry === "modules" ? ["main.js"] : ["bundle", "main.js"];
    const main = join(repoRoot, "services", name, "dist", ...entry);
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first (npm test does)`);
    const httpPort = await stablePort();
    const id = `${name}-${++this.counter}`;
    const proc = startProcess({
      name: id,
      command: process.execPath,
      args: [main],
      logPath: join(this.logsDir, `${id}.log`),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG: this.base.kubeconfigPath,
        NATS_URL: this.base.natsUrl,
        HTTP_PORT: String(httpPort),
        POD_NAME: id,
        LOG_LEVEL: "debug",
        ...this.base.env,
        ...env,
      },
    });
    const probe = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${httpPort}${path}`);
      return { status: res.status, body: await res.text() };
    };
    await waitFor(
      async () => {
        proc.assertRunning();
        return (await probe("/healthz").catch(() => ({ status: 0 }))).status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: `${id} /healthz` },
    );
    const service: RunningService = {
      name: id,
      process: proc,
      httpPort,
      probe,
      stop: async () => {
        await proc.stop(30_000);
        this.running.delete(service);
      },
      kill: async () => {
        process.kill(-proc.pid, "SIGKILL");
        await proc.exited;
        this.running.delete(service);
      },
    };
    this.running.add(service);
    return service;
  }

  /** Stops every service still running, then releases the log directory. */
  async stop(options: StopOptions = {}): Promise<void> {
    await Promise.all([...this.running].map((s) => s.stop()));
    releaseArtifactsDir(this.logsDir, options.keepLogs ?? false);
  }
}
