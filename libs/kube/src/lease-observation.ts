/** The parts of a Lease record that tell whether its holder is still alive. */
export interface LeaseRecord {
  holderIdentity: string;
  renewTime: string;
  leaseDurationSeconds: number;
  leaseTransitions: number;
}

/**
 * What this process last saw of a Lease, timed on its own monotonic clock, as
 * client-go does: a holder is alive as long as its record keeps changing, and
 * expired once the record stayed the same for a whole lease duration here. The
 * holder's timestamps are only compared with each other, never with this clock,
 * so clock skew between machines cannot hand the lease over early.
 */
export class LeaseObservation {
  private record: LeaseRecord | undefined;
  private observedAt = 0;

  /** Notes the record read at `nowMs` (a monotonic time); a changed record restarts the expiry clock. */
  observe(record: LeaseRecord, nowMs: number): void {
    const same =
      this.record !== undefined &&
      this.record.holderIdentity === record.holderIdentity &&
      this.record.renewTime === record.renewTime &&
      this.record.leaseTransitions === record.leaseTransitions;
    if (!same) {
      this.record = { ...record };
      this.observedAt = nowMs;
    }
  }

  /** Whether the holder seen last may be replaced at `nowMs`: no holder, or no change for a lease duration. */
  expired(nowMs: number): boolean {
    if (!this.record || this.record.holderIdentity === "") return true;
    return this.observedAt + this.record.leaseDurationSeconds * 1000 <= nowMs;
  }

  /** The holder seen last, "" when none. */
  get holder(): string {
    return this.record?.holderIdentity ?? "";
  }
}
