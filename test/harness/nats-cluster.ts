import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstreamManager, type StreamInfo } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { StopOptions } from "./artifacts.js";
import { canConnect, stablePort } from "./ports.js";
import { startProcess, type ManagedProcess } from "./process.js";
import { startStack } from "./teardown.js";
import { toolPath } from "./tools.js";
import { waitFor } from "./wait-for.js";

/** Options for {@link startNatsCluster}. */
export interface NatsClusterOptions {
  /** Tools directory; defaults to the one the global setup provided. */
  toolsDir?: string;
  /** Number of nodes; 3 unless told otherwise (the smallest cluster that survives losing one). */
  size?: number;
}

/** One member of a {@link NatsCluster}: its ports and store stay the same across restarts. */
export interface NatsClusterNode {
  /** `server_name`, as JetStream reports leaders and replicas: `n1`, `n2`, ... */
  readonly name: string;
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Route listener the other nodes connect to. */
  readonly clusterPort: number;
  /** HTTP monitoring endpoint (`/jsz`, `/healthz`, `/varz`). */
  readonly monitorUrl: string;
  /** True while the node's process runs. */
  running(): boolean;
}

/** How a node is stopped: SIGTERM lets it shut down in order, SIGKILL is a crash. */
export interface StopNodeOptions {
  signal?: "SIGTERM" | "SIGKILL";
}

/** A running cluster of pinned nats-servers with JetStream, on loopback. */
export interface NatsCluster {
  readonly nodes: readonly NatsClusterNode[];
  /** Every member's client URL, comma-separated, as NATS_URL takes them. */
  readonly url: string;
  readonly logsDir: string;
  /** The node named `name`; throws for an unknown name. */
  node(name: string): NatsClusterNode;
  /** Stops one node (SIGTERM by default) and leaves it down until {@link NatsCluster.startNode}. */
  stopNode(name: string, options?: StopNodeOptions): Promise<void>;
  /** Starts a stopped node on the same ports and store, resolving once it accepts connections. */
  startNode(name: string): Promise<void>;
  /** Name of the JetStream meta leader as a running node's `/jsz` reports it (undefined while none). */
  metaLeader(): Promise<string | undefined>;
  /** `$JS.API.STREAM.INFO` for `stream`, answered by its leader, through any running node. */
  streamInfo(stream: string): Promise<StreamInfo>;
  /** `stream`'s state in `node`'s own copy, from that node's `/jsz` (undefined when it has none). */
  nodeStreamState(node: string, stream: string): Promise<{ messages: number; last_seq: number } | undefined>;
  /** Name of the node leading `stream` (undefined while none). */
  streamLeader(stream: string): Promise<string | undefined>;
  stop(options?: StopOptions): Promise<void>;
}

interface NodeState extends NatsClusterNode {
  proc?: ManagedProcess;
  generation: number;
  configPath: string;
}

/** The JetStream part of `/jsz` the harness reads. */
interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number };
  account_details?: Array<{
    stream_detail?: Array<{ name: string; state?: { messages: number; last_seq: number } }>;
  }>;
}

const CLUSTER_NAME = "tenantplane-test";

/**
 * Starts `size` (3) pinned nats-servers as one cluster with JetStream: each its own
 * `server_name`, store directory, client, route and monitoring port, with routes to
 * all the others. Resolves once every node accepts connections and agrees on a
 * JetStream meta leader.
 */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsCluster> {
  // Ports come from outside the ephemeral range (see stablePort), so nothing on the machine is
  // handed one while a node is down; another server asking for the same port by number between
  // the pick and the bind is still possible, and then the cluster starts again on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsClusterOnce(options);
    } catch (err) {
      if (attempt >= 3) throw err;
      console.error(`[harness] NATS cluster start failed (${String(err)}); trying again on new ports`);
    }
  }
}

async function startNatsClusterOnce(options: NatsClusterOptions): Promise<NatsCluster> {
  const binary = toolPath("nats-server", options.toolsDir);
  const size = options.size ?? 3;
  return startStack("nats-cluster", async (teardown) => {
    const dir = teardown.dir;
    const nodes: NodeState[] = [];
    for (let i = 1; i <= size; i++) {
      const [port, clusterPort, monitorPort] = [await stablePort(), await stablePort(), await stablePort()];
      nodes.push({
        name: `n${i}`,
        port,
        clusterPort,
        url: `nats://127.0.0.1:${port}`,
        monitorUrl: `http://127.0.0.1:${monitorPort}`,
        generation: 0,
        configPath: join(dir, `n${i}.conf`),
        running() {
          return this.proc?.running() ?? false;
        },
      });
    }
    for (const node of nodes) {
      const storeDir = join(dir, node.name, "jetstream");
      mkdirSync(storeDir, { recursive: true });
      const routes = nodes.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
      writeFileSync(
        node.configPath,
        [
          `server_name: ${node.name}`,
          `listen: 127.0.0.1:${node.port}`,
          `http: ${node.monitorUrl.replace("http://", "")}`,
          `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
          "cluster {",
          `  name: ${CLUSTER_NAME}`,
          `  listen: 127.0.0.1:${node.clusterPort}`,
          `  routes: [${routes.join(", ")}]`,
          "}",
          "",
        ].join("\n"),
      );
    }
    teardown.add({ stop: async () => void (await Promise.all(nodes.map((n) => n.proc?.stop()))) });

    const launch = async (node: NodeState) => {
      node.generation += 1;
      const proc = startProcess({
        name: `nats-${node.name}`,
        command: binary,
        args: ["-c", node.configPath],
        logPath: join(dir, `${node.name}-${node.generation}.log`),
      });
      node.proc = proc;
      // Up means this process answers on its ports: /varz names the node, so a port held by
      // someone else is not mistaken for it (that node exits, and assertRunning quotes its log).
      await waitFor(
        async () => {
          proc.assertRunning();
          if (!(await canConnect("127.0.0.1", node.port))) return false;
          return (await varz(node).catch(() => undefined))?.server_name === node.name;
        },
        { description: `nats ${node.name} on port ${node.port} to accept connections`, timeoutMs: 60_000 },
      );
    };
    const byName = (name: string): NodeState => {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no NATS node named ${name}: the cluster has ${nodes.map((n) => n.name).join(", ")}`);
      return node;
    };
    const varz = async (node: NatsClusterNode): Promise<{ server_name?: string }> => {
      const res = await fetch(`${node.monitorUrl}/varz`);
      if (!res.ok) throw new Error(`${node.name} /varz answered ${res.status}`);
      return (await res.json()) as { server_name?: string };
    };
    const jsz = async (node: NatsClusterNode, query = ""): Promise<Jsz> => {
      const res = await fetch(`${node.monitorUrl}/jsz${query}`);
      if (!res.ok) throw new Error(`${node.name} /jsz answered ${res.status}`);
      return (await res.json()) as Jsz;
    };
    const running = () => nodes.filter((n) => n.running());

    const metaLeader = async (): Promise<string | undefined> => {
      for (const node of running()) {
        const leader = await jsz(node).then(
          (j) => j.meta_cluster?.leader,
          () => undefined,
        );
        if (leader) return leader;
      }
      return undefined;
    };

    const streamInfo = async (stream: string): Promise<StreamInfo> => {
      const nc = await connect({ servers: running().map((n) => n.url), maxReconnectAttempts: 0, timeout: 5_000 });
      try {
        return await (await jetstreamManager(nc, { timeout: 5_000 })).streams.info(stream);
      } finally {
        await nc.close();
      }
    };

    await Promise.all(nodes.map(launch));
    await waitFor(
      async () => {
        const leaders = await Promise.all(nodes.map(async (n) => (await jsz(n)).meta_cluster?.leader));
        return leaders.every((l) => l && l === leaders[0]);
      },
      { description: "every NATS node to agree on a JetStream meta leader", timeoutMs: 60_000, intervalMs: 250 },
    );

    return {
      nodes,
      url: nodes.map((n) => n.url).join(","),
      logsDir: dir,
      node: byName,
      async stopNode(name, stopOptions = {}) {
        const node = byName(name);
        const proc = node.proc;
        if (!proc?.running()) return;
        if (stopOptions.signal === "SIGKILL") {
          process.kill(-proc.pid, "SIGKILL");
          await proc.exited;
        } else {
          await proc.stop();
        }
      },
      async startNode(name) {
        const node = byName(name);
        if (node.running()) return;
        await launch(node);
      },
      metaLeader,
      streamInfo,
      async nodeStreamState(name, stream) {
        const details = await jsz(byName(name), "?accounts=true&streams=true");
        const streams = (details.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
        return streams.find((s) => s.name === stream)?.state;
      },
      async streamLeader(stream) {
        return (await streamInfo(stream)).cluster?.leader;
      },
      stop: (stopOptions?: StopOptions) => teardown.stop(stopOptions),
    };
  });
}
