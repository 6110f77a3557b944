import { describe, expect, it } from "vitest";
import { changeOf } from "./object-change.js";

const at = (resourceVersion: string) => ({ metadata: { name: "x", resourceVersion } });

describe("changeOf", () => {
  it("tells create, update and no-op apart", () => {
    expect(changeOf(undefined, at("1"))).toBe("Create");
    expect(changeOf(at("1"), at("2"))).toBe("Update");
    expect(changeOf(at("2"), at("2"))).toBeUndefined();
  });
});
