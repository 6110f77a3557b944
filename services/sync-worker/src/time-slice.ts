import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Slices of synchronous work this long at most hand the event loop back: lease renewals,
 * watches and other tenants' writes wait no longer than that for a big tenant's pass.
 */
export const SLICE_MS = 10;

/** Cuts a long computation into slices, yielding to the event loop once a slice has run `sliceMs`. */
export class TimeSlicer {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Yields (a macrotask: I/O and timers run first) when the current slice has used its time. */
  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await nextTurn();
    this.since = performance.now();
  }
}
