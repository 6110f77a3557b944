import { delimiter, join } from "node:path";

/** Where the host cluster's configuration comes from, in kubectl's order. */
export type KubeconfigSource =
  | { type: "files"; paths: string[]; via: "--kubeconfig" | "KUBECONFIG" | "~/.kube/config" }
  | { type: "in-cluster" };

/** What {@link findKubeconfig} looks at; `exists` is asked about files only. */
export interface KubeconfigLookup {
  flag: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** The home directory when the environment names none (os.homedir()). */
  home: string | undefined;
  exists(path: string): boolean;
}

/** The in-cluster service account's token: its presence (with KUBERNETES_SERVICE_HOST) means "running in a Pod". */
export const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * The first source that exists, in kubectl's order: `--kubeconfig` (taken as given, so a
 * missing file is reported by the loader), the existing files of `KUBECONFIG` (merged by
 * the caller, first one first, as kubectl does; missing ones are skipped), `~/.kube/config`, the in-cluster service account. When none does, `tried` says what each
 * source was, one entry each, for the message that replaces the client library's fallback to
 * http://localhost:8080 (which fails with an unrelated TLS complaint).
 */
export function findKubeconfig(lookup: KubeconfigLookup): KubeconfigSource | { tried: string[] } {
  if (lookup.flag !== undefined) return { type: "files", paths: [lookup.flag], via: "--kubeconfig" };
  const tried = ["--kubeconfig (not given)"];
  const listed = (lookup.env["KUBECONFIG"] ?? "").split(delimiter).filter((entry) => entry !== "");
  const fromEnv = listed.filter((path) => lookup.exists(path));
  if (fromEnv.length > 0) return { type: "files", paths: fromEnv, via: "KUBECONFIG" };
  tried.push(
    listed.length === 0
      ? "KUBECONFIG (unset)"
      : `KUBECONFIG=${lookup.env["KUBECONFIG"]} (${listed.length === 1 ? "no such file" : "none of these files exists"})`,
  );
  const home = lookup.env["HOME"] || lookup.home;
  const config = home === undefined || home === "" ? undefined : join(home, ".kube", "config");
  if (config !== undefined && lookup.exists(config)) return { type: "files", paths: [config], via: "~/.kube/config" };
  tried.push(config === undefined ? "~/.kube/config (no home directory)" : `~/.kube/config (${config}: no such file)`);
  const serviceHost = lookup.env["KUBERNETES_SERVICE_HOST"];
  if (serviceHost && lookup.exists(SERVICE_ACCOUNT_TOKEN)) return { type: "in-cluster" };
  tried.push(
    serviceHost
      ? `the in-cluster service account (${SERVICE_ACCOUNT_TOKEN}: no such file)`
      : "the in-cluster service account (KUBERNETES_SERVICE_HOST unset: not running in a Pod)",
  );
  return { tried };
}

/** The message for a live command that found no kubeconfig: what was tried, and the two ways on. */
export function noKubeconfigMessage(tried: readonly string[]): string {
  return [
    "no host cluster configured. Tried:",
    ...tried.map((entry) => `  - ${entry}`),
    "Pass --kubeconfig <file> or set KUBECONFIG to reach a cluster, or plan without one:",
    "  tenantplane explain-sync --offline --tenant <name> -f <file>",
  ].join("\n");
}
