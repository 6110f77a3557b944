import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import { hostNamespaceFor } from "@tenantplane/mapping";
import YAML from "yaml";
import { KUBECONFIG_KEY, kubeconfigSecretName, tenantLabels } from "./control-plane.js";
import { ContentMemo } from "./internal/content-memo.js";
import type { IssuedCertificate } from "./pki.js";
import { encodeSecretData } from "./secret-data.js";

/** What an admin kubeconfig for one tenant is made of; all PEM material is embedded. */
export interface KubeconfigInput {
  tenant: string;
  /** URL of the tenant API, e.g. from endpointFor() or externalEndpointFrom(). */
  server: string;
  /** The tenant's server CA certificate, which signs k3s's serving certificate. */
  caPem: string;
  /** Client certificate and key signed by the tenant's client CA. */
  certPem: string;
  keyPem: string;
}

/**
 * A self-contained kubeconfig (certificates inline as base64 data, no exec plugin, no file
 * paths) whose cluster, user and context are all named after the tenant.
 */
export function buildKubeconfig(input: KubeconfigInput): string {
  const name = input.tenant;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: input.server, "certificate-authority-data": base64(input.caPem) } }],
    users: [
      {
        name,
        user: {
          "client-certificate-data": base64(input.certPem),
          "client-key-data": base64(input.keyPem),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
    preferences: {},
  };
  return YAML.stringify(config);
}

/** Where the admin kubeconfig lives, in the shape of `status.kubeconfigSecretRef`. */
export interface KubeconfigSecretRef {
  namespace: string;
  name: string;
  key: string;
}

/** The reference to a tenant's kubeconfig Secret as published in `status.kubeconfigSecretRef`. */
export function kubeconfigSecretRef(tenant: string): KubeconfigSecretRef {
  return { namespace: hostNamespaceFor(tenant), name: kubeconfigSecretName(tenant), key: KUBECONFIG_KEY };
}

/**
 * Secret `<tenant>-kubeconfig` (type Opaque, managed labels) holding the kubeconfig under
 * {@link KUBECONFIG_KEY}. Uses `data`, not `stringData`, so server-side apply sees no drift.
 */
export function kubeconfigSecret(input: { tenant: string; namespace?: string; kubeconfig: string }): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: kubeconfigSecretName(input.tenant),
      namespace: input.namespace ?? hostNamespaceFor(input.tenant),
      labels: tenantLabels(input.tenant),
    },
    type: "Opaque",
    data: encodeSecretData({ [KUBECONFIG_KEY]: input.kubeconfig }),
  };
}

function base64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

/** Why a stored kubeconfig must be replaced, or when its client certificate expires if it need not be. */
export type KubeconfigVerdict = { renew: true; why: string } | { renew: false; expiresAt: Date; renewAt: Date };

/** What {@link judgeKubeconfig} compares a stored kubeconfig with. */
export interface KubeconfigExpectation {
  server: string;
  /** The tenant's current server CA certificate, which the kubeconfig must trust. */
  serverCaPem: string;
  /** The tenant's current client CA certificate, which must have issued the client certificate. */
  clientCaPem: string;
  now: Date;
}

/**
 * Whether a stored admin kubeconfig still serves: it must point at `server`, trust the current
 * server CA, hold a client certificate issued by the current client CA, and be younger than two
 * thirds of that certificate's lifetime, so it is renewed well before anyone's copy expires.
 * Pure; a kubeconfig that cannot be read is renewed.
 */
export function judgeKubeconfig(stored: string | undefined, expect: KubeconfigExpectation): KubeconfigVerdict {
  if (stored === undefined) return { renew: true, why: "no kubeconfig yet" };
  const facts = readings.get(readingKey(stored, expect), () => readStoredKubeconfig(stored, expect));
  if (facts.renew) return facts;
  const renewAt = new Date(facts.notBefore + ((facts.notAfter - facts.notBefore) * 2) / 3);
  if (expect.now.getTime() >= renewAt.getTime()) {
    return {
      renew: true,
      why: `two thirds of the client certificate's lifetime have passed (expires ${new Date(facts.notAfter).toISOString()})`,
    };
  }
  return { renew: false, expiresAt: new Date(facts.notAfter), renewAt };
}

/** What a stored kubeconfig says against the tenant's server, CAs: all but the clock's part of the verdict. */
type KubeconfigReading = { renew: true; why: string } | { renew: false; notBefore: number; notAfter: number };

// Every pass judges the tenant's kubeconfig; parsing it and checking its certificate's issuer
// through OpenSSL is worth doing once per content (one entry per tenant in a steady state).
const readings = new ContentMemo<KubeconfigReading>(2048);
const readingKey = (kubeconfig: string, expect: Omit<KubeconfigExpectation, "now">) => [
  kubeconfig,
  expect.server,
  expect.serverCaPem,
  expect.clientCaPem,
];

function readStoredKubeconfig(stored: string, expect: Omit<KubeconfigExpectation, "now">): KubeconfigReading {
  let parsed: { server?: string; caPem?: string; certPem?: string };
  try {
    const config = YAML.parse(stored) as {
      clusters?: Array<{ cluster?: Record<string, string> }>;
      users?: Array<{ user?: Record<string, string> }>;
    };
    const cluster = config.clusters?.[0]?.cluster ?? {};
    const user = config.users?.[0]?.user ?? {};
    parsed = {
      ...(cluster["server"] !== undefined ? { server: cluster["server"] } : {}),
      ...(cluster["certificate-authority-data"] !== undefined
        ? { caPem: unbase64(cluster["certificate-authority-data"]) }
        : {}),
      ...(user["client-certificate-data"] !== undefined ? { certPem: unbase64(user["client-certificate-data"]) } : {}),
    };
  } catch {
    return { renew: true, why: "the stored kubeconfig cannot be read" };
  }
  if (parsed.server !== expect.server) return { renew: true, why: `the server moved to ${expect.server}` };
  if (parsed.caPem?.trim() !== expect.serverCaPem.trim()) {
    return { renew: true, why: "the tenant's server CA changed" };
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(parsed.certPem ?? "");
  } catch {
    return { renew: true, why: "the stored client certificate cannot be read" };
  }
  const ca = new X509Certificate(expect.clientCaPem);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
    return { renew: true, why: "the tenant's client CA changed" };
  }
  return {
    renew: false,
    notBefore: new Date(cert.validFrom).getTime(),
    notAfter: new Date(cert.validTo).getTime(),
  };
}

/**
 * The expiry of the client certificate `issued` in a kubeconfig just built from it by
 * {@link buildKubeconfig}, signed by the client CA `expect` names. What judgeKubeconfig will
 * read from it is known now, so it is remembered: the next pass judges the stored copy without
 * parsing and verifying it again.
 */
export function issuedKubeconfigExpiry(
  kubeconfig: string,
  issued: Pick<IssuedCertificate, "notBefore" | "notAfter">,
  expect: Omit<KubeconfigExpectation, "now">,
): Date {
  readings.remember(readingKey(kubeconfig, expect), {
    renew: false,
    notBefore: issued.notBefore.getTime(),
    notAfter: issued.notAfter.getTime(),
  });
  return issued.notAfter;
}

function unbase64(text: string): string {
  return Buffer.from(text, "base64").toString("utf8");
}
