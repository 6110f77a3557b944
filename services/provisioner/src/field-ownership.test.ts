import { describe, expect, it } from "vitest";
import { withoutCreateEntry } from "./field-ownership.js";

const entry = (manager: string, operation: string, subresource?: string) => ({
  manager,
  operation,
  apiVersion: "v1",
  fieldsType: "FieldsV1",
  fieldsV1: {},
  ...(subresource ? { subresource } : {}),
});

describe("withoutCreateEntry", () => {
  it("drops the manager's Update entry and keeps everyone else's, its Apply entry included", () => {
    const list = [
      entry("me", "Update"),
      entry("me", "Apply"),
      entry("other", "Update"),
      entry("me", "Update", "status"),
    ];
    expect(withoutCreateEntry(list, "me")).toEqual([
      entry("me", "Apply"),
      entry("other", "Update"),
      entry("me", "Update", "status"),
    ]);
  });

  it("is undefined when there is nothing to hand over or nothing would remain", () => {
    expect(withoutCreateEntry([entry("me", "Apply")], "me")).toBeUndefined();
    expect(withoutCreateEntry(undefined, "me")).toBeUndefined();
    expect(withoutCreateEntry([entry("me", "Update")], "me")).toBeUndefined();
    // A create not handed over yet: its entry is the manager's only claim, and must stay.
    expect(withoutCreateEntry([entry("me", "Update"), entry("other", "Update", "status")], "me")).toBeUndefined();
  });
});
