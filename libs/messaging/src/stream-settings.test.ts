import { describe, expect, it } from "vitest";
import { bulkheadProblem, streamUpdate } from "./stream-settings.js";

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

describe("a bulkhead (DECISIONS' per-subject limit)", () => {
  const decisionsBuiltIn = { subjects: ["tenantplane.decisions.>"], description: "d", max_msgs_per_subject: 1000 };
  const older = { subjects: ["tenantplane.decisions.>"], description: "d", num_replicas: 1, max_msgs_per_subject: -1 };

  it("is set on a stream that has none, from the configuration or the built-in value", () => {
    expect(streamUpdate(older, decisionsBuiltIn, {}, ["max_msgs_per_subject"])).toEqual({ max_msgs_per_subject: 1000 });
    expect(streamUpdate(older, decisionsBuiltIn, { max_msgs_per_subject: 50 }, ["max_msgs_per_subject"])).toEqual({
      max_msgs_per_subject: 50,
    });
    expect(streamUpdate({ ...older, max_msgs_per_subject: 0 }, decisionsBuiltIn, {}, ["max_msgs_per_subject"])).toEqual(
      { max_msgs_per_subject: 1000 },
    );
  });

  it("keeps an operator's own limit, raised only when configured higher", () => {
    const operators = { ...older, max_msgs_per_subject: 10 };
    expect(streamUpdate(operators, decisionsBuiltIn, {}, ["max_msgs_per_subject"])).toBeUndefined();
    expect(streamUpdate(operators, decisionsBuiltIn, { max_msgs_per_subject: 5 }, ["max_msgs_per_subject"])).toBe(
      undefined,
    );
    expect(streamUpdate(operators, decisionsBuiltIn, { max_msgs_per_subject: 20 }, ["max_msgs_per_subject"])).toEqual({
      max_msgs_per_subject: 20,
    });
  });

  it("makes a per-subject limit that refuses new messages discard old ones instead", () => {
    const refusing = { ...older, max_msgs_per_subject: 10, discard_new_per_subject: true };
    expect(streamUpdate(refusing, decisionsBuiltIn, {}, ["max_msgs_per_subject"])).toEqual({
      discard_new_per_subject: false,
    });
  });

  it("is left alone on streams that do not need it", () => {
    expect(streamUpdate(older, decisionsBuiltIn, {})).toBeUndefined();
  });

  it("is checked on the configuration the server stored", () => {
    expect(bulkheadProblem({ name: "DECISIONS", max_msgs_per_subject: 1000 }, ["max_msgs_per_subject"])).toBe(
      undefined,
    );
    expect(bulkheadProblem({ name: "DECISIONS", max_msgs_per_subject: -1 }, ["max_msgs_per_subject"])).toMatch(
      /^stream DECISIONS has no max_msgs_per_subject \(-1\)/,
    );
    expect(
      bulkheadProblem({ name: "DECISIONS", max_msgs_per_subject: 5, discard_new_per_subject: true }, [
        "max_msgs_per_subject",
      ]),
    ).toMatch(/discard_new_per_subject/);
  });
});
