import { describe, expect, it } from "vitest";
import { CliError } from "./cli-io.js";
import { parseManifests, readManifests } from "./read-manifests.js";

describe("parseManifests", () => {
  it("reads every document of a YAML stream in order, skipping empty ones", () => {
    const text = "kind: A\n---\n---\n# only a comment\n---\nkind: B\n";
    expect(parseManifests(text, "f.yaml")).toEqual([{ kind: "A" }, { kind: "B" }]);
  });

  it("reads JSON, including a top-level array", () => {
    expect(parseManifests('{"kind":"A"}', "f.json")).toEqual([{ kind: "A" }]);
    expect(parseManifests('[{"kind":"A"},{"kind":"B"}]', "f.json")).toEqual([{ kind: "A" }, { kind: "B" }]);
  });

  it("flattens List items as they are", () => {
    const list = { apiVersion: "v1", kind: "List", items: [{ apiVersion: "v1", kind: "Pod" }, { kind: "Secret" }] };
    expect(parseManifests(JSON.stringify(list), "f")).toEqual(list.items);
  });

  it("gives items of a typed list the list's kind and apiVersion", () => {
    const list = { apiVersion: "v1", kind: "PodList", items: [{ metadata: { name: "p" } }, { kind: "Odd" }] };
    expect(parseManifests(JSON.stringify(list), "f")).toEqual([
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } },
      { kind: "Odd" },
    ]);
  });

  it("keeps objects that merely have an items field", () => {
    const value = { kind: "ConfigMap", items: [1] };
    expect(parseManifests(JSON.stringify(value), "f")).toEqual([value]);
  });

  it("names the file and 1-based document of a syntax error", () => {
    const call = () => parseManifests("kind: A\n---\nkind: [B\n", "bad.yaml");
    expect(call).toThrow(CliError);
    expect(call).toThrow(/^bad\.yaml: document 2: .*line \d+, column \d+$/);
  });

  it("reads every other document when some cannot be read, reporting each by position", () => {
    const text = "kind: A\n---\nkind: [B\n---\na: &x [1]\nb: *y\n---\nkind: C\n";
    const { objects, problems } = readManifests(text, "f.yaml");
    expect(objects).toEqual([{ kind: "A" }, { kind: "C" }]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^f\.yaml: document 2: /);
    expect(problems[1]).toMatch(/^f\.yaml: document 3: /);
    expect(problems.every((p) => !p.includes("\n"))).toBe(true);
  });
});
