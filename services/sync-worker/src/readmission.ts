import type { RawObject } from "@tenantplane/kube";
import { describe as describeError, httpStatusOf, type Logger } from "@tenantplane/runtime";
import type { TenantBudget } from "./tenant-limits.js";

/** What {@link Readmission} reads and where it hands an object back. */
export interface ReadmissionDeps {
  budget: TenantBudget;
  /** The tenant object as its API server holds it now, or undefined when it is gone. */
  fetch(kind: string, namespace: string, name: string): Promise<RawObject | undefined>;
  /** Hands the fetched object to its watch, which judges it again (ListWatch.reconsider). */
  reconsider(kind: string, obj: RawObject): boolean;
  logger: Logger;
}

/** A burst of deletes frees room once: wait this long after the first before fetching. */
const DELAY_MS = 1_000;
/** Objects fetched in one round; a round that had more schedules the next. */
const BATCH = 100;

/**
 * Brings back held-back tenant objects once room is free. The worker keeps only a stub of an
 * object beyond the tenant's limits (tenant-limits.ts), so when a delete or a shrink frees room
 * it reads the objects that would fit again from the tenant API and hands each to its watch,
 * whose transform admits it whole: without this they stay held back until their next change.
 */
export class Readmission {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;

  constructor(private readonly deps: ReadmissionDeps) {}

  /** Room came free: a round runs soon unless one is already due or nothing is held back. */
  schedule(delayMs = DELAY_MS): void {
    if (this.stopped || this.timer !== undefined || this.deps.budget.heldBack === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, delayMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async round(): Promise<void> {
    if (this.running) return this.schedule();
    this.running = true;
    let more = false;
    try {
      const due = this.deps.budget.readmittable();
      more = due.length > BATCH;
      for (const { kind, namespace, name } of due.slice(0, BATCH)) {
        if (this.stopped) return;
        try {
          const obj = await this.deps.fetch(kind, namespace, name);
          // Gone: its watch reports the delete. A newer version than the watch's: the watch brings it.
          if (obj !== undefined) this.deps.reconsider(kind, obj);
        } catch (err) {
          if (httpStatusOf(err) === 404) continue;
          more = true;
          this.deps.logger.warn(
            { kind, namespace, name, err: describeError(err) },
            "cannot read a held-back object again; retrying",
          );
        }
      }
    } finally {
      this.running = false;
    }
    if (more) this.schedule(DELAY_MS * 5);
  }
}
