import { describe, expect, it } from "vitest";
import type { RawObject } from "@tenantplane/kube";
import { OwnWrites } from "./own-writes.js";

function obj(resourceVersion: string | undefined, uid = "u1", note = ""): RawObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    note,
  } as RawObject;
}

describe("OwnWrites", () => {
  it("shows a write until the cache holds that version, then the cache", () => {
    const own = new OwnWrites();
    own.remember("k", obj("12", "u1", "written"), 0);
    expect(own.view("k", obj("11", "u1", "cached"), 1)?.["note"]).toBe("written");
    expect(own.view("k", undefined, 2)?.["note"]).toBe("written");
    expect(own.view("k", obj("12", "u1", "cached"), 3)?.["note"]).toBe("cached");
    expect(own.size).toBe(0);
    // Caught up once: a later stale view is the cache's own business.
    expect(own.view("k", obj("11", "u1", "cached"), 4)?.["note"]).toBe("cached");
  });

  it("yields to a newer version in the cache, compared as integers", () => {
    const own = new OwnWrites();
    own.remember("k", obj("99", "u1", "written"), 0);
    expect(own.view("k", obj("100", "u1", "cached"), 1)?.["note"]).toBe("cached");
  });

  it("yields to another object of that name (a new uid)", () => {
    const own = new OwnWrites();
    own.remember("k", obj("50", "u1", "written"), 0);
    expect(own.view("k", obj("7", "u2", "cached"), 1)?.["note"]).toBe("cached");
  });

  it("treats versions that are not integers as caught up: a repeated write, never a missed one", () => {
    const own = new OwnWrites();
    own.remember("k", obj("b", "u1", "written"), 0);
    expect(own.view("k", obj("a", "u1", "cached"), 1)?.["note"]).toBe("cached");
  });

  it("forgets a write the cache never shows after the memory time, and prunes such writes", () => {
    const own = new OwnWrites(1_000);
    own.remember("k", obj("5", "u1", "written"), 0);
    expect(own.view("k", undefined, 999)?.["note"]).toBe("written");
    expect(own.view("k", undefined, 1_001)).toBeUndefined();
    own.remember("a", obj("6"), 0);
    own.remember("b", obj("7"), 900);
    own.prune(1_500);
    expect(own.size).toBe(1);
    expect(own.view("b", undefined, 1_500)?.metadata.resourceVersion).toBe("7");
  });

  it("does not remember an answer without a resource version", () => {
    const own = new OwnWrites();
    own.remember("k", obj(undefined), 0);
    expect(own.size).toBe(0);
  });
});
