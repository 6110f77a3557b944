import type { Decision } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import { notSyncedOf } from "./decision-history.js";

let n = 0;
const decision = (action: Decision["action"], name: string, reason = `${action} ${name}`): Decision => ({
  id: `id-${++n}`,
  time: `2026-05-01T12:00:${String(n).padStart(2, "0")}.000Z`,
  tenant: "dev",
  service: "sync-worker",
  action,
  kind: "Pod",
  tenantRef: { namespace: "shop", name },
  hostRef: { namespace: "tp-dev", name: `${name}-x-shop-x-dev` },
  reason,
  ...(action === "Fail"
    ? { error: { code: 403, reason: "Forbidden", message: "exceeded quota", attempted: "Create" } }
    : {}),
});

describe("notSyncedOf", () => {
  it("keeps each object's latest Decision when it is a Skip or a Fail", () => {
    const list = notSyncedOf([
      decision("Fail", "web"),
      decision("Create", "db"),
      decision("Skip", "api", "held by foreign object"),
      decision("Fail", "db"),
      decision("Fail", "later"),
      decision("Create", "later"),
    ]);
    expect(list.map((e) => [e.tenantRef.name, e.action, e.reason])).toEqual([
      ["api", "Skip", "held by foreign object"],
      ["db", "Fail", "Fail db"],
      ["web", "Fail", "Fail web"],
    ]);
    expect(list[1]?.error).toEqual({ code: 403, reason: "Forbidden", message: "exceeded quota", attempted: "Create" });
  });
});
