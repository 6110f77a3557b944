import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ANNOTATION_CONTENT_HASH,
  LABEL_CONTROL_PLANE,
  LABEL_MANAGED_BY,
  LABEL_TENANT,
  LABEL_VIRTUAL_NAMESPACE,
} from "./constants.js";
import { isLabelValue } from "./label-value.js";
import {
  escapeReserved,
  hostLabelKey,
  isManaged,
  isReservedKey,
  reverseLookup,
  reverseMapping,
  stripReserved,
} from "./reverse-mapping.js";

/** Property budget: cases per fast-check property. */
const REVERSE_LOOKUP_RUNS = 1000;

// Tenant names are DNS labels of at most 60 characters (TenantNameSchema in @tenantplane/api).
const tenantName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,58}[a-z0-9])?$/);
// Adversarial virtual names: dots, separators, maximum-length subdomains, unicode.
const virtualName = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/),
  fc.constantFrom("a-x-b", "x-", "-x", "a.b.c", "z".repeat(253), "kube-root-ca.crt"),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }),
);
const kind = fc.constantFrom("Pod", "ConfigMap", "Secret", "Service", "ServiceAccount", "PersistentVolumeClaim");

describe("reverseMapping", () => {
  it("writes the four labels and two annotations", () => {
    expect(reverseMapping({ tenant: "dev", namespace: "shop", name: "web" }, "Pod")).toEqual({
      labels: {
        "app.kubernetes.io/managed-by": "tenantplane",
        "tenantplane.io/tenant": "dev",
        "tenantplane.io/virtual-namespace": "shop",
        "tenantplane.io/kind": "Pod",
      },
      annotations: {
        "tenantplane.io/virtual-namespace": "shop",
        "tenantplane.io/virtual-name": "web",
      },
    });
  });

  it("makes label values valid and keeps annotations verbatim", () => {
    const namespace = "ns.with.dots-and-a-very-long-tail-that-goes-past-sixty-three-characters";
    const mapping = reverseMapping({ tenant: "dev", namespace, name: "é" }, "Pod");
    expect(isLabelValue(mapping.labels[LABEL_VIRTUAL_NAMESPACE] ?? "")).toBe(true);
    expect(mapping.labels[LABEL_VIRTUAL_NAMESPACE]).not.toBe(namespace);
    expect(mapping.annotations).toMatchObject({
      "tenantplane.io/virtual-namespace": namespace,
      "tenantplane.io/virtual-name": "é",
    });
  });
});

describe("reverseLookup", () => {
  it("recovers the exact identity and kind for adversarial names", () => {
    fc.assert(
      fc.property(tenantName, virtualName, virtualName, kind, (tenant, namespace, name, k) => {
        const { labels, annotations } = reverseMapping({ tenant, namespace, name }, k);
        expect(reverseLookup({ labels: { ...labels, app: "web" }, annotations })).toEqual({
          tenant,
          namespace,
          name,
          kind: k,
        });
      }),
      { numRuns: REVERSE_LOOKUP_RUNS },
    );
  });

  it("returns undefined for objects tenantplane does not manage", () => {
    const { labels, annotations } = reverseMapping({ tenant: "dev", namespace: "a", name: "b" }, "Pod");
    expect(reverseLookup({ labels: { ...labels, [LABEL_MANAGED_BY]: "helm" }, annotations })).toBeUndefined();
    expect(reverseLookup({})).toBeUndefined();
  });

  it("returns undefined when a reverse-mapping key is missing", () => {
    const { labels, annotations } = reverseMapping({ tenant: "dev", namespace: "a", name: "b" }, "Pod");
    const { [LABEL_TENANT]: _dropped, ...withoutTenant } = labels;
    expect(reverseLookup({ labels: withoutTenant, annotations })).toBeUndefined();
    expect(reverseLookup({ labels })).toBeUndefined();
  });
});

describe("isManaged", () => {
  it("is true only for managed-by tenantplane", () => {
    expect(isManaged({ labels: { [LABEL_MANAGED_BY]: "tenantplane" } })).toBe(true);
    expect(isManaged({ labels: { [LABEL_MANAGED_BY]: "Tenantplane" } })).toBe(false);
    expect(isManaged({ labels: {} })).toBe(false);
    expect(isManaged({})).toBe(false);
  });
});

describe("stripReserved", () => {
  it("drops tenantplane.io keys, its subdomains and managed-by, and keeps the rest", () => {
    const stripped = stripReserved({
      app: "web",
      "example.com/team": "a",
      [LABEL_MANAGED_BY]: "tenantplane",
      [LABEL_CONTROL_PLANE]: "true",
      [ANNOTATION_CONTENT_HASH]: "forged",
      "sync.tenantplane.io/x": "y",
      "nottenantplane.io/keep": "z",
    });
    expect(stripped).toEqual({ app: "web", "example.com/team": "a", "nottenantplane.io/keep": "z" });
  });

  it("returns an empty map for undefined and never mutates its input", () => {
    expect(stripReserved(undefined)).toEqual({});
    const input = { [LABEL_TENANT]: "x" };
    stripReserved(input);
    expect(input).toEqual({ [LABEL_TENANT]: "x" });
  });

  it("agrees with isReservedKey", () => {
    expect(isReservedKey("tenantplane.io")).toBe(false);
    expect(isReservedKey("tenantplane.io/")).toBe(true);
  });
});

describe("hostLabelKey", () => {
  const labelKey =
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

  it("keeps ordinary keys and escapes reserved ones into a valid, reserved label key", () => {
    expect(hostLabelKey("app")).toBe("app");
    expect(hostLabelKey("example.com/team")).toBe("example.com/team");
    const escaped = hostLabelKey(LABEL_MANAGED_BY);
    expect(escaped).toMatch(/^escaped\.tenantplane\.io\/app\.kubernetes\.io-managed-by-[0-9a-f]{16}$/);
    expect(escaped).toMatch(labelKey);
    expect(isReservedKey(escaped)).toBe(true);
  });

  it("is injective on reserved keys, and an escaped key escapes again to something else", () => {
    const reserved = fc.oneof(
      fc.string({ maxLength: 60 }).map((s) => `tenantplane.io/${s}`),
      fc.string({ maxLength: 60 }).map((s) => `x.tenantplane.io/${s}`),
      fc.constant(LABEL_MANAGED_BY),
    );
    fc.assert(
      fc.property(reserved, reserved, (a, b) => {
        expect(hostLabelKey(a)).toMatch(labelKey);
        if (a !== b) expect(hostLabelKey(a)).not.toBe(hostLabelKey(b));
        expect(hostLabelKey(hostLabelKey(a))).not.toBe(hostLabelKey(a));
      }),
      { numRuns: REVERSE_LOOKUP_RUNS },
    );
  });

  it("escapes every key of a map", () => {
    expect(escapeReserved({ app: "web", [LABEL_MANAGED_BY]: "Helm" })).toEqual({
      app: "web",
      [hostLabelKey(LABEL_MANAGED_BY)]: "Helm",
    });
    expect(escapeReserved(undefined)).toEqual({});
  });
});
