import { CliError, EXIT_USAGE } from "./cli-io.js";
import { type Cluster, onCluster } from "./host.js";

/** `namespace`, `name` and `key` of `--hash-key-secret <namespace>/<name>[/<key>]`; a usage error (exit 2) otherwise. */
export function parseHashKeySecret(ref: string): { namespace: string; name: string; key: string } {
  const [namespace, name, key = "hash-key", ...rest] = ref.split("/");
  if (!namespace || !name || !key || rest.length > 0) {
    throw new CliError(`--hash-key-secret ${ref}: use <namespace>/<name>[/<key>]`, EXIT_USAGE);
  }
  return { namespace, name, key };
}

/**
 * The content-hash key the sync worker uses: from `--hash-key-secret namespace/name[/key]`
 * on the host, else `CONTENT_HASH_KEY`, else none (unkeyed hashes).
 */
export async function readHashKey(
  host: Cluster,
  secretRef: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  if (secretRef === undefined) return env["CONTENT_HASH_KEY"] || undefined;
  const { namespace, name, key } = parseHashKeySecret(secretRef);
  const secret = await onCluster(
    host,
    `read Secret ${namespace}/${name}`,
    (o) => o.get<{ apiVersion: string; kind: string; data?: Record<string, string> }>("v1", "Secret", name, namespace),
    `"get" on "secrets" in namespace ${namespace}`,
  );
  const value = secret?.data?.[key];
  if (value === undefined) {
    throw new CliError(
      `--hash-key-secret: Secret ${namespace}/${name} ${secret === undefined ? "does not exist" : `has no key ${key}`}`,
    );
  }
  return Buffer.from(value, "base64").toString("utf8");
}
