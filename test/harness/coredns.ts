import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { Resolver } from "node:dns/promises";
import { dirname, join } from "node:path";
import { createArtifactsDir, releaseArtifactsDir, type StopOptions } from "./artifacts.js";
import { stablePort } from "./ports.js";
import { startProcess } from "./process.js";
import { toolPath } from "./tools.js";
import { waitFor } from "./wait-for.js";

/** Options for {@link startCoreDns}. */
export interface CoreDnsOptions {
  /** Loopback address to listen on (UDP and TCP). */
  address: string;
  /** A Corefile as the product generates it: its one server block and file paths are moved here. */
  corefile: string;
  /** Files the Corefile reads, by the path the product gives them (e.g. `/etc/coredns/records/zone`). */
  files: Record<string, string>;
  /** Replaces the Corefile's upstream (`forward . <upstream>`), so a test never waits on the machine's resolver. */
  upstream?: string;
  toolsDir?: string;
}

/** A running CoreDNS. */
export interface CoreDns {
  address: string;
  port: number;
  /** Replaces a file (by its product path), as a ConfigMap update does on a mounted volume. */
  writeFile(productPath: string, content: string): void;
  stop(options?: StopOptions): Promise<void>;
}

/**
 * Starts the pinned CoreDNS on `address` with the product's Corefile, changed only where a
 * test process must differ from a pod: its files live in an artifact directory, it listens
 * on a free port bound to `address`, and the readiness endpoint is left out. Resolves once
 * it answers a query.
 */
export async function startCoreDns(options: CoreDnsOptions): Promise<CoreDns> {
  const dir = createArtifactsDir(`coredns-${options.address}`);
  const local = (productPath: string) => join(dir, "files", productPath);
  const writeFile = (productPath: string, content: string) => {
    const path = local(productPath);
    mkdirSync(dirname(path), { recursive: true });
    // Write-then-rename, as the kubelet swaps a ConfigMap volume's contents atomically.
    writeFileSync(`${path}.tmp`, content);
    renameSync(`${path}.tmp`, path);
  };
  for (const [path, content] of Object.entries(options.files)) writeFile(path, content);
  const port = await stablePort(options.address);
  let corefile = options.corefile
    .replace(/^\.:\d+ \{$/m, `.:${port} {\n    bind ${options.address}`)
    .replace(/^\s*ready .*\n/m, "");
  if (options.upstream !== undefined) corefile = corefile.replace(/^(\s*forward \. ).*$/m, `$1${options.upstream}`);
  for (const path of Object.keys(options.files)) corefile = corefile.split(` ${path} `).join(` ${local(path)} `);
  const corefilePath = join(dir, "Corefile");
  writeFileSync(corefilePath, corefile);
  const proc = startProcess({
    name: `coredns-${options.address}`,
    command: toolPath("coredns", options.toolsDir),
    args: ["-conf", corefilePath],
    logPath: join(dir, "coredns.log"),
  });
  const resolver = dnsResolver(options.address, port);
  try {
    await waitFor(
      async () => {
        proc.assertRunning();
        // Any answer, even NXDOMAIN or a failure to forward, means it serves; only a timeout does not.
        return resolver.resolve4("ready.cluster.local").then(
          () => true,
          (err: NodeJS.ErrnoException) => (err.code === "ETIMEOUT" || err.code === "ECONNREFUSED" ? undefined : true),
        );
      },
      { timeoutMs: 15_000, intervalMs: 100, description: `CoreDNS on ${options.address}:${port}` },
    );
  } catch (err) {
    await proc.stop();
    releaseArtifactsDir(dir, true);
    throw err;
  }
  return {
    address: options.address,
    port,
    writeFile,
    async stop(stopOptions?: StopOptions) {
      await proc.stop();
      releaseArtifactsDir(dir, stopOptions?.keepLogs ?? false);
    },
  };
}

/** A resolver that asks only `address:port`, one name at a time, without any search list. */
export function dnsResolver(address: string, port: number): Resolver {
  const resolver = new Resolver({ timeout: 1_000, tries: 2 });
  resolver.setServers([`${address}:${port}`]);
  return resolver;
}

/** The resolv.conf settings a pod's DNS config gives it. */
export interface ResolvConf {
  searches: readonly string[];
  ndots: number;
}

/**
 * Resolves `name` to IPv4 addresses (or, with `type` CNAME, its alias target) as glibc's
 * resolver does with this resolv.conf: a name ending in a dot is absolute; one with at least
 * `ndots` dots is tried as given first, else after every search domain; NXDOMAIN and empty
 * answers move on to the next candidate. Returns the name that answered and its answers, or
 * undefined when none did.
 */
export async function resolveWithSearch(
  resolver: Resolver,
  conf: ResolvConf,
  name: string,
  type: "A" | "CNAME" = "A",
): Promise<{ fqdn: string; addresses: string[] } | undefined> {
  let candidates: string[];
  if (name.endsWith(".")) candidates = [name.slice(0, -1)];
  else {
    const searched = conf.searches.map((domain) => `${name}.${domain}`);
    const dots = name.split(".").length - 1;
    candidates = dots >= conf.ndots ? [name, ...searched] : [...searched, name];
  }
  for (const candidate of candidates) {
    try {
      const addresses = await (type === "A" ? resolver.resolve4(candidate) : resolver.resolveCname(candidate));
      if (addresses.length > 0) return { fqdn: candidate, addresses };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // glibc also goes on after a server failure or a timeout, and gives up only at the end of the list.
      if (!["ENOTFOUND", "ENODATA", "ESERVFAIL", "EREFUSED", "ETIMEOUT"].includes(code ?? "")) throw err;
    }
  }
  return undefined;
}
