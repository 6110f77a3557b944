import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDnsSubdomain, MAX_SUBDOMAIN_LENGTH, storageClassCopyName } from "./storage-class-copy.js";

const tenantName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,58}[a-z0-9])?$/);
const className = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,40}[a-z0-9])?$/),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  fc.stringMatching(/^[a-z0-9][-a-z0-9.]{200,252}$/),
);

describe("storageClassCopyName", () => {
  it("is tp-<tenant>.<class> when that is a short DNS subdomain", () => {
    expect(storageClassCopyName("acme", "standard")).toBe("tp-acme.standard");
    expect(storageClassCopyName("acme", "ebs.gp3")).toBe("tp-acme.ebs.gp3");
  });

  it("keeps a plain name of exactly 253 characters and hashes one of 254", () => {
    const fits = "a".repeat(MAX_SUBDOMAIN_LENGTH - "tp-acme.".length);
    expect(storageClassCopyName("acme", fits)).toBe(`tp-acme.${fits}`);
    const over = storageClassCopyName("acme", `${fits}a`);
    expect(over).toMatch(/^tp-acme\.a+-[0-9a-f]{16}$/);
    expect(over).toHaveLength(MAX_SUBDOMAIN_LENGTH);
  });

  it("hashes a name that already ends like a hashed one, so plain and hashed names never meet", () => {
    const lookalike = storageClassCopyName("acme", "x-0123456789abcdef");
    expect(lookalike).not.toBe("tp-acme.x-0123456789abcdef");
    expect(lookalike).toMatch(/^tp-acme\.x-0123456789abcdef-[0-9a-f]{16}$/);
  });

  it("is always a valid StorageClass name, deterministic, and names the tenant first", () => {
    fc.assert(
      fc.property(tenantName, className, (tenant, cls) => {
        const name = storageClassCopyName(tenant, cls);
        expect(isDnsSubdomain(name)).toBe(true);
        expect(name).toBe(storageClassCopyName(tenant, cls));
        expect(name.startsWith(`tp-${tenant}`)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("gives distinct (tenant, class) pairs distinct names", () => {
    const pairs = fc.tuple(tenantName, className);
    fc.assert(
      fc.property(pairs, pairs, ([t1, c1], [t2, c2]) => {
        fc.pre(t1 !== t2 || c1 !== c2);
        expect(storageClassCopyName(t1, c1)).not.toBe(storageClassCopyName(t2, c2));
      }),
      { numRuns: 2000 },
    );
    // Tenant names may contain what class names contain: the first dot ends the tenant.
    expect(storageClassCopyName("a", "b.c")).not.toBe(storageClassCopyName("a-b", "c"));
  });
});
