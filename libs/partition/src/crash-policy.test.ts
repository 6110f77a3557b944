import { describe, expect, it } from "vitest";
import {
  countCrash,
  emptyRecord,
  onProbation,
  parseRecord,
  probationUntil,
  recentCrashes,
  release,
  type Crash,
} from "./crash-policy.js";

const policy = { crashes: 3, windowMs: 600_000 };
const MIN = 60_000;
const crash = (marker: number, at: number, worker = `w${marker}`): Crash => ({ worker, at, marker });

/** Counts crashes one after another as separate workers would, returning the last outcome. */
function countAll(crashes: Crash[], token?: string) {
  let record = emptyRecord();
  let last: ReturnType<typeof countCrash> | undefined;
  for (const c of crashes) {
    last = countCrash(record, c, policy, c.at, token);
    record = last.record;
  }
  return last!;
}

describe("countCrash", () => {
  it("quarantines at the third crash within ten minutes, not before", () => {
    const two = countAll([crash(1, 0), crash(2, 4 * MIN)]);
    expect(two.quarantinedNow).toBe(false);
    expect(two.record.quarantined).toBeUndefined();
    expect(onProbation(two.record, policy, 4 * MIN)).toBe(true);
    // Alone on its worker for a window after the last crash.
    expect(probationUntil(two.record, policy, 4 * MIN)).toBe(14 * MIN);
    expect(probationUntil(two.record, policy, 14 * MIN)).toBeUndefined();

    const three = countCrash(two.record, crash(3, 9 * MIN), policy, 9 * MIN, undefined);
    expect(three.quarantinedNow).toBe(true);
    expect(three.record.quarantined?.crashes.map((c) => c.worker)).toEqual(["w1", "w2", "w3"]);
    expect(onProbation(three.record, policy, 9 * MIN)).toBe(false);
  });

  it("forgets crashes older than the window: three crashes spread over an hour never quarantine", () => {
    const spread = countAll([crash(1, 0), crash(2, 20 * MIN), crash(3, 40 * MIN)]);
    expect(spread.quarantinedNow).toBe(false);
    expect(spread.recent.map((c) => c.marker)).toEqual([3]);
    expect(spread.record.crashes).toHaveLength(1);
  });

  it("counts one marker once, whichever worker finds it", () => {
    const first = countCrash(emptyRecord(), crash(7, 0), policy, 0, undefined);
    const again = countCrash(first.record, crash(7, 1_000), policy, 1_000, undefined);
    expect(again.counted).toBe(false);
    expect(again.record).toBe(first.record);
    expect(again.recent).toHaveLength(1);
  });

  it("adds to a quarantined tenant's crashes without quarantining it again", () => {
    const quarantined = countAll([crash(1, 0), crash(2, 1), crash(3, 2)]);
    const later = countCrash(quarantined.record, crash(4, 3), policy, 3, undefined);
    expect(later.quarantinedNow).toBe(false);
    expect(later.record.quarantined?.at).toBe(2);
  });
});

describe("release", () => {
  const quarantined = countAll([crash(1, 0), crash(2, 1), crash(3, 2)], "old").record;

  it("releases on a release annotation value other than the one standing at quarantine time", () => {
    expect(release(quarantined, undefined, 10)).toBeUndefined();
    expect(release(quarantined, "old", 10)).toBeUndefined();
    const released = release(quarantined, "2026-12-01T22:00Z", 10)!;
    expect(released).toEqual({ crashes: [], released: { at: 10, token: "2026-12-01T22:00Z" } });
    // On probation for a window after the release, then not.
    expect(onProbation(released, policy, 10 + policy.windowMs - 1)).toBe(true);
    expect(onProbation(released, policy, 10 + policy.windowMs)).toBe(false);
  });

  it("does nothing for a tenant that is not quarantined", () => {
    expect(release(emptyRecord(), "now", 0)).toBeUndefined();
  });

  it("needs a new value for the next quarantine: the value that released the last one stands", () => {
    const released = release(quarantined, "first", 10)!;
    let record = released;
    for (const c of [crash(4, 20), crash(5, 21), crash(6, 22)])
      record = countCrash(record, c, policy, c.at, "first").record;
    expect(record.quarantined?.standingToken).toBe("first");
    expect(release(record, "first", 30)).toBeUndefined();
    expect(release(record, "second", 30)?.released?.token).toBe("second");
  });
});

describe("parseRecord", () => {
  it("reads a stored record and treats anything unreadable as empty", () => {
    const stored = countAll([crash(1, 0)]).record;
    expect(parseRecord(JSON.stringify(stored))).toEqual(stored);
    expect(parseRecord("{not json")).toEqual(emptyRecord());
    expect(parseRecord(JSON.stringify({ crashes: "many" }))).toEqual(emptyRecord());
    expect(parseRecord(undefined)).toEqual(emptyRecord());
    expect(recentCrashes(emptyRecord(), policy, 0)).toEqual([]);
  });
});
