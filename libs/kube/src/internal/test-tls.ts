// Test support for the clients' unit tests: a certificate for a local TLS endpoint and a
// KubeConfig that trusts it. Not exported from the package.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";

/** A self-signed certificate (P-256) named `commonName`, for 127.0.0.1, valid for a day. */
export function localCertificate(commonName = "127.0.0.1"): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "kube-test-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-subj", `/CN=${commonName}`, "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"],
        ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true });
  }
}

/**
 * A KubeConfig for the listening `server`, trusting `ca`, authenticating with a bearer `token`
 * or, given `user`, with whatever that user entry holds (e.g. client certificate files).
 */
export function kubeConfigFor(server: Server, ca: string, token = "t", user?: Omit<User, "name">): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: "c",
        server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        caData: Buffer.from(ca).toString("base64"),
      },
    ],
    users: [{ name: "u", ...(user ?? { token }) }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}
