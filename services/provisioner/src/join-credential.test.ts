import { describe, expect, it } from "vitest";
import {
  ANNOTATION_JOIN_EXPIRES,
  BOOTSTRAP_TOKEN_PATTERN,
  JOIN_TOKEN_TTL_MS,
  bootstrapTokenMatches,
  bootstrapTokenSecret,
  caHash,
  generateBootstrapToken,
  joinReasons,
  joinSecret,
  k3sJoinToken,
  parseK3sJoinToken,
  planJoinCredential,
  readJoinSecret,
  type BootstrapToken,
  type JoinCredential,
} from "./join-credential.js";
import { generateTenantPki, pkiSecretData } from "./pki.js";
import { decodeSecretData } from "./secret-data.js";

// sha256sum of these exact bytes, computed outside the code under test.
const KNOWN_PEM =
  "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBATAKBggqhkjOPQQDAjAkMSIwIAYDVQQDDBl0ZW5hbnRw\n-----END CERTIFICATE-----\n";
const KNOWN_HASH = "6d0e6c8b5f81351efe52d8e824022fe6f2d6de157f229c69ed239bada0b8a2de";

const TOKEN: BootstrapToken = { id: "abc123", secret: "0123456789abcdef" };
const NOW = new Date("2026-05-01T12:00:00Z");
const SERVER = "https://k3s.tp-acme.svc:6443";

function credential(overrides: Partial<JoinCredential> = {}): JoinCredential {
  return {
    token: TOKEN,
    server: SERVER,
    serverCaPem: KNOWN_PEM,
    expiresAt: new Date(NOW.getTime() + JOIN_TOKEN_TTL_MS),
    ...overrides,
  };
}

describe("bootstrap token", () => {
  it("is <6>.<16> characters of [a-z0-9], different each time", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateBootstrapToken();
      expect(`${token.id}.${token.secret}`).toMatch(BOOTSTRAP_TOKEN_PATTERN);
      seen.add(token.secret);
    }
    expect(seen.size).toBe(200);
  });

  it("draws every character from the whole alphabet", () => {
    let n = 0;
    const token = generateBootstrapToken((max) => {
      expect(max).toBe(36);
      return n++ % max;
    });
    expect(token).toEqual({ id: "abcdef", secret: "ghijklmnopqrstuv" });
  });

  it("is a kube-system Secret of type bootstrap.kubernetes.io/token in k3s's node group", () => {
    const secret = bootstrapTokenSecret("acme", TOKEN, new Date("2026-05-08T12:00:00.123Z"));
    expect(secret.metadata).toEqual({
      name: "bootstrap-token-abc123",
      namespace: "kube-system",
      labels: { "app.kubernetes.io/managed-by": "tenantplane" },
    });
    expect(secret.type).toBe("bootstrap.kubernetes.io/token");
    expect(decodeSecretData(secret)).toEqual({
      "token-id": "abc123",
      "token-secret": "0123456789abcdef",
      "usage-bootstrap-authentication": "true",
      "usage-bootstrap-signing": "true",
      "auth-extra-groups": "system:bootstrappers:k3s:default-node-token",
      description: "tenantplane: private nodes of tenant acme join with this token (spec.isolation.mode Private)",
      expiration: "2026-05-08T12:00:00Z",
    });
    expect(bootstrapTokenMatches(secret, TOKEN, new Date("2026-05-08T12:00:00Z"))).toBe(true);
    expect(bootstrapTokenMatches(secret, { ...TOKEN, secret: "x".repeat(16) }, new Date("2026-05-08T12:00:00Z"))).toBe(
      false,
    );
  });
});

describe("k3s join token", () => {
  it("pins the server CA by the SHA-256 of its PEM bytes", () => {
    expect(caHash(KNOWN_PEM)).toBe(KNOWN_HASH);
    expect(k3sJoinToken(KNOWN_PEM, TOKEN)).toBe(`K10${KNOWN_HASH}::abc123.0123456789abcdef`);
  });

  it("hashes the CA exactly as the PKI Secret hands it to k3s", async () => {
    const pki = await generateTenantPki("acme");
    expect(caHash(pki.serverCa.certPem)).toBe(caHash(pkiSecretData(pki)["server-ca.crt"]!));
  });

  it("reads back what it writes and nothing else", () => {
    expect(parseK3sJoinToken(k3sJoinToken(KNOWN_PEM, TOKEN))).toEqual({ caHash: KNOWN_HASH, token: TOKEN });
    expect(parseK3sJoinToken(`K10${KNOWN_HASH}::server:password`)).toBeUndefined();
    expect(parseK3sJoinToken("abc123.0123456789abcdef")).toBeUndefined();
  });
});

describe("host join Secret", () => {
  it("holds token, server and ca.crt, its expiry in an annotation, under tenantplane's labels", () => {
    const secret = joinSecret("acme", credential());
    expect(secret.metadata).toEqual({
      name: "acme-join",
      namespace: "tp-acme",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "acme" },
      annotations: { [ANNOTATION_JOIN_EXPIRES]: "2026-05-08T12:00:00Z" },
    });
    expect(secret.type).toBe("Opaque");
    expect(decodeSecretData(secret)).toEqual({
      token: `K10${KNOWN_HASH}::abc123.0123456789abcdef`,
      server: SERVER,
      "ca.crt": KNOWN_PEM,
    });
    expect(readJoinSecret(secret)).toEqual(credential());
  });

  it("is unreadable when its token does not pin its own ca.crt", () => {
    const secret = joinSecret("acme", credential());
    secret.data!["ca.crt"] = Buffer.from("other").toString("base64");
    expect(readJoinSecret(secret)).toBeUndefined();
  });
});

describe("planJoinCredential", () => {
  const mint = () => ({ id: "new111", secret: "ffffffffffffffff" });
  const base = { server: SERVER, serverCaPem: KNOWN_PEM, now: NOW, mint };
  const stored = (c: Partial<JoinCredential> = {}) => joinSecret("acme", credential(c));

  it.each(["Shared", "Dedicated"] as const)("removes a stored credential when the mode is %s", (mode) => {
    expect(planJoinCredential({ ...base, mode, stored: stored() })).toEqual({ action: "remove", mode });
    expect(planJoinCredential({ ...base, mode, stored: undefined })).toEqual({ action: "none" });
  });

  it("issues a first token valid for seven days", () => {
    const plan = planJoinCredential({ ...base, mode: "Private", stored: undefined });
    expect(plan).toEqual({
      action: "issue",
      why: "no join credential yet",
      credential: {
        token: mint(),
        server: SERVER,
        serverCaPem: KNOWN_PEM,
        expiresAt: new Date("2026-05-08T12:00:00Z"),
      },
    });
  });

  it("keeps a token with more than half its lifetime left, and says when it renews", () => {
    const plan = planJoinCredential({ ...base, mode: "Private", stored: stored() });
    expect(plan).toEqual({ action: "keep", credential: credential(), renewAt: new Date("2026-05-05T00:00:00Z") });
  });

  it("rotates once less than half remains; the old token is left to expire", () => {
    const later = new Date("2026-05-05T00:00:00Z");
    const plan = planJoinCredential({ ...base, now: later, mode: "Private", stored: stored() });
    expect(plan).toMatchObject({
      action: "issue",
      why: "less than half of its lifetime remains (token abc123 expires 2026-05-08T12:00:00Z)",
      credential: { token: mint(), expiresAt: new Date("2026-05-12T00:00:00Z") },
    });
  });

  it("issues a new token when the server CA changed, and rewrites the server in place when it moved", () => {
    const newCa = "-----BEGIN CERTIFICATE-----\nNEW\n-----END CERTIFICATE-----\n";
    expect(planJoinCredential({ ...base, serverCaPem: newCa, mode: "Private", stored: stored() })).toMatchObject({
      action: "issue",
      why: "the tenant's server CA changed",
      credential: { serverCaPem: newCa, token: mint() },
    });
    expect(
      planJoinCredential({ ...base, server: "https://203.0.113.7:6443", mode: "Private", stored: stored() }),
    ).toEqual({
      action: "rewrite",
      why: "the server moved to https://203.0.113.7:6443",
      credential: credential({ server: "https://203.0.113.7:6443" }),
    });
  });

  it("replaces a stored credential it cannot read", () => {
    const broken = stored();
    delete broken.metadata!.annotations;
    expect(planJoinCredential({ ...base, mode: "Private", stored: broken })).toMatchObject({
      action: "issue",
      why: "the stored join credential cannot be read",
    });
  });
});

describe("Decision reasons", () => {
  it("name the mode and the token id, never the secret", () => {
    const c = credential();
    const reasons = [
      joinReasons.issued(c, "no join credential yet"),
      joinReasons.rewritten(c, "the server moved"),
      joinReasons.tokenCreated("acme", c),
      joinReasons.tokenReplaced(c),
      joinReasons.tokenRevoked("Shared", "abc123"),
      joinReasons.removed("Dedicated"),
    ];
    for (const reason of reasons) {
      expect(reason).toMatch(/spec\.isolation\.mode is (Private|Shared|Dedicated)/);
      expect(reason).not.toContain(TOKEN.secret);
    }
    expect(reasons[0]).toBe(
      "join credential for private nodes (spec.isolation.mode is Private): bootstrap token abc123 for " +
        "https://k3s.tp-acme.svc:6443, valid until 2026-05-08T12:00:00Z (no join credential yet)",
    );
    expect(reasons[4]).toBe(
      "spec.isolation.mode is Shared, not Private: bootstrap token abc123 revoked, no new private node may join",
    );
  });
});
