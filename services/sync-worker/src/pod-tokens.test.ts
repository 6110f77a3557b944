import type { RawObject } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { ANNOTATION_TOKEN_POD_UID, ANNOTATION_TOKEN_REFRESH_AT, dueTokenWork } from "./pod-tokens.js";

const requests = JSON.stringify([{ key: "token-0", expirationSeconds: 3607 }]);
const pod = (name: string, annotations: Record<string, string> = { "tenantplane.io/token-requests": requests }) =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "tp-dev", uid: `uid-${name}`, annotations },
  }) as RawObject;
const secret = (pod: string, uid: string, refreshAt: string, data: Record<string, string> = { "token-0": "dA==" }) =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `${pod}.token`,
      namespace: "tp-dev",
      annotations: { [ANNOTATION_TOKEN_POD_UID]: uid, [ANNOTATION_TOKEN_REFRESH_AT]: refreshAt },
    },
    data,
  }) as RawObject;

describe("dueTokenWork", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const due = (pods: RawObject[], secrets: RawObject[]) =>
    dueTokenWork(pods, (name) => secrets.find((s) => s.metadata.name === name), now).map((w) => [
      w.pod.metadata.name,
      w.why,
    ]);

  it("mints for a Pod with token requests and no Secret, never for one without requests", () => {
    expect(due([pod("a"), pod("b", {})], [])).toEqual([["a", "absent"]]);
  });

  it("refreshes when the refresh time has come, and only then", () => {
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-29T12:00:01Z")])).toEqual([]);
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-29T11:59:59Z")])).toEqual([["a", "due for refresh"]]);
  });

  it("replaces a Secret made for an earlier Pod of the same name, or lacking a token", () => {
    expect(due([pod("a")], [secret("a", "uid-old", "2026-11-30T00:00:00Z")])).toEqual([
      ["a", "made for an earlier Pod of that name"],
    ]);
    expect(due([pod("a")], [secret("a", "uid-a", "2026-11-30T00:00:00Z", {})])).toEqual([
      ["a", "lacks a requested token"],
    ]);
  });

  it("leaves a Pod that is being deleted alone", () => {
    const going = pod("a");
    going.metadata.deletionTimestamp = "2026-11-29T11:00:00Z";
    expect(due([going], [])).toEqual([]);
  });
});
