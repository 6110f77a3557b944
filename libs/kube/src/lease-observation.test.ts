import { describe, expect, it } from "vitest";
import { LeaseObservation } from "./lease-observation.js";

const record = (renewTime: string, holderIdentity = "a") => ({
  holderIdentity,
  renewTime,
  leaseDurationSeconds: 10,
  leaseTransitions: 0,
});

describe("LeaseObservation", () => {
  it("keeps a holder alive while its renewTime changes, however old the timestamps look", () => {
    const seen = new LeaseObservation();
    // A holder whose clock is an hour behind ours.
    seen.observe(record("2026-01-01T00:00:00.000000Z"), 0);
    seen.observe(record("2026-01-01T00:00:02.000000Z"), 9_000);
    expect(seen.expired(18_000)).toBe(false);
    seen.observe(record("2026-01-01T00:00:04.000000Z"), 18_000);
    expect(seen.expired(27_999)).toBe(false);
  });

  it("expires a record that stayed the same for a lease duration on this clock", () => {
    const seen = new LeaseObservation();
    // Timestamps from the future do not keep a dead holder alive either.
    seen.observe(record("2099-01-01T00:00:00.000000Z"), 1_000);
    seen.observe(record("2099-01-01T00:00:00.000000Z"), 6_000);
    expect(seen.expired(10_999)).toBe(false);
    expect(seen.expired(11_000)).toBe(true);
  });

  it("treats a released lease as free", () => {
    const seen = new LeaseObservation();
    seen.observe(record("2026-01-01T00:00:00.000000Z", ""), 0);
    expect(seen.expired(0)).toBe(true);
  });
});
