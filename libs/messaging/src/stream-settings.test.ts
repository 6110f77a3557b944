import { describe, expect, it } from "vitest";
import { streamUpdate } from "./stream-settings.js";

const builtIn = { subjects: ["tenantplane.tenants.>"], description: "tenant keys", num_replicas: 1 };
const operators = {
  subjects: ["tenantplane.tenants.>"],
  description: "ours, thanks",
  num_replicas: 3,
  max_age: 3_600_000_000_000,
  max_bytes: 1024,
};

describe("streamUpdate", () => {
  it("leaves an operator's stream alone when nothing is configured", () => {
    expect(streamUpdate(operators, builtIn, {})).toBeUndefined();
  });

  it("never lowers replicas or limits, even when configured lower", () => {
    expect(streamUpdate(operators, builtIn, { num_replicas: 1, max_age: 1, max_bytes: 10 })).toBeUndefined();
  });

  it("raises what it is explicitly configured to raise, and nothing else", () => {
    expect(streamUpdate(operators, builtIn, { num_replicas: 5, max_bytes: 4096 })).toEqual({
      num_replicas: 5,
      max_bytes: 4096,
    });
  });

  it("treats unlimited as the highest setting", () => {
    expect(streamUpdate({ ...operators, max_bytes: -1, max_age: 0 }, builtIn, { max_bytes: 10, max_age: 5 })).toBe(
      undefined,
    );
  });

  it("adds a missing subject and description without dropping the operator's subjects", () => {
    expect(streamUpdate({ subjects: ["other.>"], num_replicas: 1 }, builtIn, {})).toEqual({
      subjects: ["other.>", "tenantplane.tenants.>"],
      description: "tenant keys",
    });
  });
});
