import { createHash } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import { hostNamespaceFor } from "@tenantplane/mapping";
import { pkiSecretName, tenantLabels } from "./control-plane.js";
import { ContentMemo } from "./internal/content-memo.js";
import { parsePkiSecret, pkiSecretData, type TenantPki } from "./pki.js";
import { decodeSecretData, encodeSecretData } from "./secret-data.js";

/**
 * Secret `<tenant>-pki` in the host namespace (type Opaque, managed labels) holding the PKI
 * under k3s's file names, which the control-plane pod copies onto its data volume.
 */
export function pkiSecret(tenant: string, pki: TenantPki): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: pkiSecretName(tenant), namespace: hostNamespaceFor(tenant), labels: tenantLabels(tenant) },
    type: "Opaque",
    data: encodeSecretData(pkiSecretData(pki)),
  };
}

// One entry per tenant in a steady state; a PKI is a few KiB of PEM.
const readBack = new ContentMemo<TenantPki>(2048);

/**
 * Reads the PKI back from a Secret as stored by the API; throws InvalidPkiSecretError naming the
 * bad key. Checking every key against its certificate goes through OpenSSL's decoders, so a
 * Secret whose content was checked before is not checked again.
 */
export function readPkiSecret(secret: Pick<V1Secret, "data">): TenantPki {
  return readBack.get(contentOf(secret), () => parsePkiSecret(decodeSecretData(secret)));
}

/**
 * Tells {@link readPkiSecret} that `secret` (built by {@link pkiSecret} from a PKI just
 * generated) holds `pki`, so the passes after its creation do not check it again.
 */
export function rememberPkiSecret(secret: Pick<V1Secret, "data">, pki: TenantPki): void {
  readBack.remember(contentOf(secret), pki);
}

function contentOf(secret: Pick<V1Secret, "data">): string[] {
  return Object.entries(secret.data ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flat();
}

/**
 * A short, stable fingerprint of a PKI's public parts (the three CA certificates and the
 * service-account key's hash): equal PKIs give equal fingerprints, a regenerated one a new one.
 * Safe to show: it reveals nothing about the keys.
 */
export function pkiFingerprint(pki: TenantPki): string {
  const hash = createHash("sha256");
  for (const part of [pki.serverCa.certPem, pki.clientCa.certPem, pki.requestHeaderCa.certPem]) hash.update(part);
  hash.update(createHash("sha256").update(pki.serviceAccountKeyPem).digest());
  return hash.digest("hex").slice(0, 32);
}
