import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { API_VERSION } from "./constants.js";
import { parseIsolationProfile } from "./isolation-profile.js";
import { parseSyncPolicy } from "./sync-policy.js";
import { parseTenantCluster } from "./tenant-cluster.js";
import { ValidationError } from "./validation-error.js";

// The repository's example manifests are the shared corpus for this test and for the
// admission test against a real API server: every valid file must parse, every file under
// invalid/ must fail on the field its `tenantplane.io/expect-error` annotation names.

const EXAMPLES = new URL("../../../examples/", import.meta.url);
const EXPECT_ERROR = "tenantplane.io/expect-error";

const parsers: Record<string, (input: unknown) => unknown> = {
  TenantCluster: parseTenantCluster,
  IsolationProfile: parseIsolationProfile,
  SyncPolicy: parseSyncPolicy,
};

interface Manifest {
  file: string;
  object: { apiVersion?: string; kind?: string; metadata?: { annotations?: Record<string, string> } };
}

function load(dir: URL): Manifest[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => ({ file, object: YAML.parse(readFileSync(new URL(file, dir), "utf8")) as Manifest["object"] }))
    .filter((m) => m.object?.apiVersion === API_VERSION);
}

function parserFor(m: Manifest): (input: unknown) => unknown {
  const parse = parsers[m.object.kind ?? ""];
  if (parse === undefined) throw new Error(`${m.file}: no parser for kind ${m.object.kind}`);
  return parse;
}

/** A reported path matches when it is the expected field or lies inside it. */
function within(path: string, expected: string): boolean {
  return path === expected || path.startsWith(`${expected}.`) || path.startsWith(`${expected}[`);
}

const valid = load(EXAMPLES);
const invalid = load(new URL("invalid/", EXAMPLES));

describe("valid examples", () => {
  it("cover every kind", () => {
    expect(new Set(valid.map((m) => m.object.kind))).toEqual(new Set(Object.keys(parsers)));
  });

  it.each(valid.map((m) => [m.file, m] as const))("%s parses", (_file, m) => {
    expect(() => parserFor(m)(m.object)).not.toThrow();
  });
});

describe("invalid examples", () => {
  it("cover every kind", () => {
    expect(new Set(invalid.map((m) => m.object.kind))).toEqual(new Set(Object.keys(parsers)));
  });

  it.each(invalid.map((m) => [m.file, m] as const))("%s is rejected on the annotated field", (_file, m) => {
    const expected = m.object.metadata?.annotations?.[EXPECT_ERROR];
    expect(expected, `${m.file} lacks the ${EXPECT_ERROR} annotation`).toBeTruthy();
    let error: unknown;
    try {
      parserFor(m)(m.object);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((i) => i.path);
    expect(
      paths.some((p) => within(p, expected!)),
      `reported ${paths.join(", ")}`,
    ).toBe(true);
  });
});
