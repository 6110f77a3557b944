import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDnsLabel } from "./dns-label.js";
import { hostName, hostNamespaceFor, type VirtualIdentity } from "./host-name.js";

/** Property budgets: cases per fast-check property. */
const VALIDITY_RUNS = 2000;
const INJECTIVITY_RUNS = 300;
/** Identities in the collision loop: long names sharing a long prefix, all hashed. */
const COLLISION_LOOP_SIZE = 100_000;

const anyText = fc.string({ unit: "grapheme", maxLength: 300 });
const anyIdentity = fc.record({ tenant: anyText, namespace: anyText, name: anyText });
// A two-letter alphabet with hyphens makes `-x-` inside parts, and at their edges, common.
const tricky = fc.stringMatching(/^[ax](-{0,2}[ax.]){0,5}$/);
const trickyIdentity = fc.record({ tenant: tricky, namespace: tricky, name: tricky });

describe("hostName", () => {
  it("joins name, namespace and tenant with -x- when the result is a short DNS label", () => {
    expect(hostName({ tenant: "dev", namespace: "default", name: "web" })).toEqual({
      name: "web-x-default-x-dev",
      hashed: false,
    });
  });

  it("keeps a plain name of exactly 63 characters and hashes one of 64", () => {
    const base = { tenant: "dev", namespace: "default" };
    const fits = hostName({ ...base, name: "a".repeat(63 - "-x-default-x-dev".length) });
    expect(fits).toEqual({ name: `${"a".repeat(47)}-x-default-x-dev`, hashed: false });
    const over = hostName({ ...base, name: "a".repeat(48) });
    expect(over.hashed).toBe(true);
    expect(over.name).toMatch(/^a{46}-[0-9a-f]{16}$/);
    expect(over.name).toHaveLength(63);
  });

  it("hashes dotted names (valid ConfigMap names, invalid Service names), turning dots into hyphens", () => {
    const result = hostName({ tenant: "dev", namespace: "default", name: "app.config" });
    expect(result.hashed).toBe(true);
    expect(result.name).toMatch(/^app-config-x-default-x-dev-[0-9a-f]{16}$/);
  });

  it("hashes identities whose plain form would not read back unambiguously", () => {
    const left = hostName({ tenant: "t", namespace: "b", name: "a-x" });
    const right = hostName({ tenant: "t", namespace: "x-b", name: "a" });
    expect(left.hashed).toBe(true);
    expect(right.hashed).toBe(true);
    expect(left.name).not.toBe(right.name);
    expect(hostName({ tenant: "t", namespace: "ns", name: "a-x-b" }).hashed).toBe(true);
  });

  it("hashes plain names that end like a hashed name, so the two families never meet", () => {
    const tenant = "team-0123456789abcdef";
    expect(hostName({ tenant, namespace: "ns", name: "a" }).hashed).toBe(true);
  });

  it("gives a valid label even when nothing of the prefix survives sanitising", () => {
    expect(hostName({ tenant: "é", namespace: "ü", name: "ö" }).name).toMatch(/^[-a-z0-9]*-?[0-9a-f]{16}$/);
    expect(isDnsLabel(hostName({ tenant: "", namespace: "", name: "" }).name)).toBe(true);
  });

  it("always returns a DNS-1123 label, for any text including unicode", () => {
    fc.assert(
      fc.property(anyIdentity, (id) => isDnsLabel(hostName(id).name)),
      { numRuns: VALIDITY_RUNS },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(anyIdentity, (id) => {
        expect(hostName({ ...id })).toEqual(hostName(id));
      }),
      { numRuns: VALIDITY_RUNS },
    );
  });

  it("gives distinct names to distinct identities built to look alike", () => {
    const key = (id: VirtualIdentity) => JSON.stringify([id.tenant, id.namespace, id.name]);
    fc.assert(
      fc.property(fc.uniqueArray(trickyIdentity, { selector: key, maxLength: 200 }), (ids) => {
        const names = new Set(ids.map((id) => hostName(id).name));
        expect(names.size).toBe(ids.length);
      }),
      { numRuns: INJECTIVITY_RUNS },
    );
  });

  it(`never collides across ${COLLISION_LOOP_SIZE} long names sharing a long prefix`, () => {
    const names = new Set<string>();
    const prefix = "payments-worker-".repeat(12);
    for (let i = 0; i < COLLISION_LOOP_SIZE; i++) {
      const result = hostName({ tenant: "a".repeat(60), namespace: "n".repeat(63), name: `${prefix}${i}` });
      if (!result.hashed || !isDnsLabel(result.name)) throw new Error(`bad name for ${i}: ${result.name}`);
      names.add(result.name);
    }
    expect(names.size).toBe(COLLISION_LOOP_SIZE);
    // A budget, not a speed claim: 100,000 sha256 names take seconds on a loaded 2-core machine.
  }, 120_000);
});

describe("hostNamespaceFor", () => {
  it("prefixes the tenant with tp-", () => {
    expect(hostNamespaceFor("dev")).toBe("tp-dev");
  });

  it("yields a DNS label for the longest tenant name (60 characters)", () => {
    expect(isDnsLabel(hostNamespaceFor("t".repeat(60)))).toBe(true);
    expect(isDnsLabel(hostNamespaceFor("t".repeat(61)))).toBe(false);
  });
});
