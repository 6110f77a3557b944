// Where a service's idle memory goes. Two views, measured in the same run:
//  1. each service idle on the real stack (host cluster, NATS, no tenants): resident memory
//     against a bare Node.js process, with the V8 heap and external memory its /metrics reports;
//     before (the unbundled tsc output, dist/main.js) and after (the bundle services/bundle.mjs
//     makes, dist/bundle/main.js, which the image runs), each with V8's default settings and
//     with the NODE_OPTIONS the image sets (Dockerfile);
//  2. module load alone: a fresh process that only imports one dependency (or a service's whole
//     dependency set), so the cost of loading code is told apart from the cost of running.
//
//   npm run build && SAMPLES=1 npm run bench:footprint   (SAMPLES=5 for more samples per import,
//   IDLE_RUNS=5 for more idle runs of the services as the image runs them; default 3)
//   FOOTPRINT_NODE_OPTIONS="--max-semi-space-size=2"    (to try other settings than the image's)
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { crdManifests } from "@tenantplane/api";
import { JsonClient } from "@tenantplane/kube";
import {
  ServiceFleet,
  buildTools,
  installCrds,
  startHostCluster,
  startNats,
  type ServiceEntry,
} from "../test/harness/index.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const SAMPLES = Number(process.env.SAMPLES ?? 3);
// Idle runs of the services as the image runs them: one run's resident memory moves by several
// MiB with when V8 last collected, so the summary is the median over these runs.
const IDLE_RUNS = Number(process.env.IDLE_RUNS ?? 3);
const SERVICES = ["watcher", "provisioner", "isolation", "recorder", "sync-worker"] as const;
const MiB = 1024 * 1024;
// What the image runs every service with; the bench measures the services with and without it.
const shippedNodeOptions = process.env.FOOTPRINT_NODE_OPTIONS ?? dockerfileNodeOptions();

interface Usage {
  rss: number;
  heapUsed: number;
  external: number;
}

// A fresh process that imports `modules` in order, settles, collects garbage and reports.
// It resolves from the repository root, so workspace packages load from their built dist.
const probe = `
const modules = JSON.parse(process.argv[1]);
for (const m of modules) await import(m);
await new Promise((r) => setTimeout(r, 300));
globalThis.gc(); globalThis.gc();
const { rss, heapUsed, external } = process.memoryUsage();
process.stdout.write(JSON.stringify({ rss, heapUsed, external }));
`;

async function importCost(modules: string[], nodeOptions = ""): Promise<Usage> {
  const samples: Usage[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const { stdout } = await run(
      process.execPath,
      ["--expose-gc", "--input-type=module", "-e", probe, JSON.stringify(modules)],
      { cwd: repoRoot, env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions } },
    );
    samples.push(JSON.parse(stdout) as Usage);
  }
  const mid = (key: keyof Usage) => median(samples.map((s) => s[key]));
  return { rss: mid("rss"), heapUsed: mid("heapUsed"), external: mid("external") };
}

/** The third-party and workspace packages a service loads, from its package.json and its libraries'. */
function dependencyClosure(service: string): { thirdParty: string[]; workspace: string[] } {
  const seen = new Set<string>();
  const visit = (manifest: string) => {
    const deps = Object.keys(
      (JSON.parse(readFileSync(manifest, "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {},
    );
    for (const dep of deps) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      if (dep.startsWith("@tenantplane/")) visit(`${repoRoot}libs/${dep.slice("@tenantplane/".length)}/package.json`);
    }
  };
  visit(`${repoRoot}services/${service}/package.json`);
  const all = [...seen].sort();
  return {
    thirdParty: all.filter((d) => !d.startsWith("@tenantplane/")),
    workspace: all.filter((d) => d.startsWith("@tenantplane/")),
  };
}

// ---- 2. module load (no servers needed, so measured first on a quiet machine) ----
const bare = await importCost([]);
const closures = Object.fromEntries(SERVICES.map((s) => [s, dependencyClosure(s)]));
const thirdParty = [...new Set(Object.values(closures).flatMap((c) => c.thirdParty))].sort();
const perPackage: Array<{ name: string; usage: Usage }> = [];
for (const name of thirdParty) {
  perPackage.push({ name, usage: await importCost([name]) });
}
// KubeConfig's own module, which is all libs/kube needs at run time: its static import of the
// generated client (every model and typed API class) makes it cost what the full entry costs.
const kubeConfigModule = "@kubernetes/client-node/dist/config.js";
perPackage.push({ name: `${kubeConfigModule} (KubeConfig alone)`, usage: await importCost([kubeConfigModule]) });
const shippedBare = shippedNodeOptions ? await importCost([], shippedNodeOptions) : bare;
const perService: Array<{ name: string; thirdParty: Usage; all: Usage }> = [];
for (const service of SERVICES) {
  const { thirdParty: deps, workspace } = closures[service]!;
  perService.push({
    name: service,
    thirdParty: await importCost(deps),
    all: await importCost([...deps, ...workspace]),
  });
}

// ---- 1. idle services on the real stack ----
const toolsDir = await buildTools();
const host = await startHostCluster({ name: "footprint", toolsDir });
const nats = await startNats({ toolsDir });
type Idle = { name: string; rss: number; heap: number; external: number };
// One way of running the services: from the unbundled tsc output (what the image ran before
// services/bundle.mjs) or from the bundle, with V8's defaults or the image's NODE_OPTIONS.
interface Setting {
  entry: ServiceEntry;
  nodeOptions: string;
  title: string;
}
const settings: Setting[] = [
  { entry: "modules", nodeOptions: "", title: "before: unbundled dist/main.js, V8 defaults" },
  ...(shippedNodeOptions
    ? [
        {
          entry: "modules" as const,
          nodeOptions: shippedNodeOptions,
          title: `before: unbundled dist/main.js, NODE_OPTIONS="${shippedNodeOptions}"`,
        },
      ]
    : []),
  { entry: "bundle", nodeOptions: "", title: "after: dist/bundle/main.js, V8 defaults" },
  ...(shippedNodeOptions
    ? [
        {
          entry: "bundle" as const,
          nodeOptions: shippedNodeOptions,
          title: `after: dist/bundle/main.js, NODE_OPTIONS="${shippedNodeOptions}" (as the image runs them)`,
        },
      ]
    : []),
];
// The same services on the same stack, one setting after the other, so the settings are comparable.
async function idleServices({ entry, nodeOptions }: Setting): Promise<Idle[]> {
  const fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    entry,
    env: { LOG_LEVEL: "info", POD_NAMESPACE: "tenantplane-system", NODE_OPTIONS: nodeOptions },
  });
  const rows: Idle[] = [];
  try {
    const services = await Promise.all(SERVICES.map((name) => fleet.start(name)));
    await new Promise((r) => setTimeout(r, 10_000));
    for (const svc of services) {
      const metrics = (await svc.probe("/metrics")).body;
      rows.push({
        name: svc.name,
        rss: vmRss(svc.process.pid),
        heap: metric(metrics, "tenantplane_nodejs_heap_size_used_bytes"),
        external: metric(metrics, "tenantplane_nodejs_external_memory_bytes"),
      });
    }
  } finally {
    await fleet.stop();
  }
  return rows;
}
const idle = new Map<Setting, Idle[]>();
const imageRuns: Idle[][] = [];
try {
  await installCrds(host.kubeConfig, crdManifests());
  await new JsonClient(host.kubeConfig).request("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } },
  });
  for (const setting of settings) idle.set(setting, await idleServices(setting));
  const image = settings.find((s) => s.entry === "bundle" && s.nodeOptions === shippedNodeOptions)!;
  imageRuns.push(idle.get(image)!);
  while (imageRuns.length < IDLE_RUNS) imageRuns.push(await idleServices(image));
} finally {
  await nats.stop();
  await host.stop();
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1).padStart(6)} MiB`;
const bareRss = bare.rss;
console.log(`\nbare node process (same probe, nothing imported): rss ${mib(bareRss)}, heap ${mib(bare.heapUsed)}`);
if (shippedNodeOptions)
  console.log(`bare node process with NODE_OPTIONS="${shippedNodeOptions}": rss ${mib(shippedBare.rss)}`);
console.log(
  `\n1. idle services, no tenants (VmRSS after 10 s; heap used and external from /metrics; ratios to the plain bare process)`,
);
for (const [setting, rows] of idle) {
  console.log(`  ${setting.title}`);
  for (const row of rows) {
    console.log(
      `    ${row.name.padEnd(14)} rss ${mib(row.rss)}  ${(row.rss / bareRss).toFixed(2)}x bare   heap used ${mib(row.heap)}   external ${mib(row.external)}`,
    );
  }
}
// Before and after as the image runs them (its NODE_OPTIONS, or V8's defaults when it sets none).
const shipped = (entry: ServiceEntry) =>
  idle.get(settings.find((s) => s.entry === entry && s.nodeOptions === shippedNodeOptions)!) ?? [];
const before = shipped("modules");
const after = shipped("bundle");
const serviceOf = (row: Idle) => row.name.replace(/-\d+$/, "");
console.log(
  `\n1 in short, with the image's NODE_OPTIONS: before (unbundled, one run) -> after (bundle, median of ${imageRuns.length} runs, range), ratio to bare`,
);
for (const row of after) {
  const service = serviceOf(row);
  const was = before.find((b) => serviceOf(b) === service);
  const runs = imageRuns.flatMap((rows) => rows.filter((r) => serviceOf(r) === service).map((r) => r.rss));
  const ratio = (rss: number) => `${(rss / bareRss).toFixed(2)}x`;
  console.log(
    `  ${service.padEnd(14)} ${was ? `${mib(was.rss)} ${ratio(was.rss)}` : "?"}  ->  ${mib(median(runs))} ${ratio(median(runs))}` +
      `   (${ratio(Math.min(...runs))}-${ratio(Math.max(...runs))} over ${runs.length} runs)`,
  );
}
console.log(`\n2a. import cost of each third-party package alone (rss and heap above the bare process)`);
for (const { name, usage } of [...perPackage].sort((a, b) => b.usage.rss - a.usage.rss)) {
  console.log(`  ${name.padEnd(26)} rss +${mib(usage.rss - bareRss)}   heap +${mib(usage.heapUsed - bare.heapUsed)}`);
}
console.log(`\n2b. import cost of each service's dependencies together (no service code running)`);
for (const row of perService) {
  const running = after.find((i) => i.name.startsWith(`${row.name}-`));
  console.log(
    `  ${row.name.padEnd(14)} third-party rss ${mib(row.thirdParty.rss)} (${(row.thirdParty.rss / bareRss).toFixed(2)}x)` +
      `   + workspace libs ${mib(row.all.rss)} (${(row.all.rss / bareRss).toFixed(2)}x)` +
      (running ? `   running idle (bundle) ${mib(running.rss)}` : ""),
  );
}
console.log(`\nreproduce: npm run build && SAMPLES=${SAMPLES} IDLE_RUNS=${IDLE_RUNS} npm run bench:footprint`);

/** The NODE_OPTIONS the Dockerfile sets for every service, or "" when it sets none. */
function dockerfileNodeOptions(): string {
  const dockerfile = readFileSync(`${repoRoot}Dockerfile`, "utf8");
  return /^ENV\s+NODE_OPTIONS="([^"]*)"/m.exec(dockerfile)?.[1] ?? "";
}

function vmRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

function metric(body: string, name: string): number {
  const line = body.split("\n").find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
