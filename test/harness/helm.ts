import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubernetesObject } from "@kubernetes/client-node";
import YAML from "yaml";
import { toolPath } from "./tools.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/** The chart's directory. */
export const chartDir = join(repoRoot, "charts/tenantplane");
/** What an API server serving ValidatingAdmissionPolicies reports to Helm. */
export const POLICY_API = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
/** The test cluster's version: the go-installed helm would otherwise assume v1.20, below the chart's kubeVersion. */
export const KUBE_VERSION = "1.34.4";

// Helm with its own config and cache directories, so a developer's repositories and plugins play no part.
const helmHome = mkdtempSync(join(tmpdir(), "tenantplane-helm-"));

/** Removes helm's private directories (a suite's afterAll). */
export function removeHelmHome(): void {
  rmSync(helmHome, { recursive: true, force: true });
}

/** Runs the pinned helm in the repository root; resolves with its standard output. */
export async function helm(args: string[]): Promise<string> {
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(helmHome, "cache"),
    HELM_CONFIG_HOME: join(helmHome, "config"),
    HELM_DATA_HOME: join(helmHome, "data"),
  };
  return new Promise((resolve, reject) => {
    execFile(toolPath("helm"), args, { cwd: repoRoot, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`helm ${args.join(" ")} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * The chart's objects as release `release` in `namespace` would install them (`helm template`),
 * with values files, `set` pairs and the extra API versions the target server serves
 * (POLICY_API for the admission policies).
 */
export async function renderChart(options: {
  release: string;
  namespace: string;
  set?: string[];
  valuesFiles?: string[];
  apiVersions?: string[];
}): Promise<KubernetesObject[]> {
  const args = [
    "template",
    options.release,
    chartDir,
    "--namespace",
    options.namespace,
    "--kube-version",
    KUBE_VERSION,
  ];
  for (const file of options.valuesFiles ?? []) args.push("--values", file);
  for (const version of options.apiVersions ?? []) args.push("--api-versions", version);
  for (const pair of options.set ?? []) args.push("--set", pair);
  return YAML.parseAllDocuments(await helm(args))
    .map((doc) => doc.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => o !== null);
}
