import { countCrash, type CrashRecord } from "@tenantplane/partition";
import { describe, expect, it } from "vitest";
import { crashedMessage, quarantinedCondition, releaseCommand } from "./quarantine.js";

const policy = { crashes: 3, windowMs: 600_000 };
const at = Date.parse("2026-12-01T22:00:00Z");

describe("quarantine messages", () => {
  const counted = [1, 2, 3].reduce<{ record: CrashRecord; last?: ReturnType<typeof countCrash> }>(
    (acc, n) => {
      const last = countCrash(
        acc.record,
        { worker: `sync-worker-${n}`, at: at + n * 1000, marker: n },
        policy,
        at + n * 1000,
        undefined,
      );
      return { record: last.record, last };
    },
    { record: { crashes: [] } },
  );

  it("names every crash, the limit, what it means and the release command", () => {
    const condition = quarantinedCondition("shop", counted.record, policy);
    expect(condition).toMatchObject({ type: "Synced", status: "False", reason: "Quarantined" });
    expect(condition.message).toBe(
      "quarantined since 2026-12-01T22:00:03Z: 3 sync workers died while busy with it " +
        "(sync-worker-1 at 2026-12-01T22:00:01Z, sync-worker-2 at 2026-12-01T22:00:02Z, sync-worker-3 at 2026-12-01T22:00:03Z) " +
        "within 10m (the limit is 3), so no sync worker syncs this tenant and the other tenants keep syncing. " +
        "Look for what in this tenant makes a worker die (its logs, an OOM kill), then release it with: " +
        'kubectl annotate tenantcluster shop tenantplane.io/release-quarantine="$(date -u +%FT%TZ)" --overwrite',
    );
  });

  it("counts each crash against the limit, and says at the last one that the tenant is quarantined", () => {
    const first = countCrash({ crashes: [] }, { worker: "w1", at, marker: 9 }, policy, at, undefined);
    expect(
      crashedMessage("shop", { crash: first.recent[0]!, recent: first.recent, quarantinedNow: false }, policy),
    ).toBe(
      "sync worker w1 died while busy with this tenant (found at 2026-12-01T22:00:00Z): crash 1 of 3 within 10m; " +
        "until the window passes it runs alone on its worker, and at 3 it is quarantined",
    );
    const last = counted.last!;
    const text = crashedMessage("shop", { crash: last.recent[2]!, recent: last.recent, quarantinedNow: true }, policy);
    expect(text).toMatch(/crash 3 of 3 within 10m; the tenant is quarantined until released with: kubectl annotate/);
    expect(text).toContain(releaseCommand("shop"));
  });
});
