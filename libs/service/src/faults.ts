/**
 * Fault injection for tests on the real stack, off unless a service is started with
 * TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE=1: then the process SIGKILLs itself right
 * after its first tracked host write, before publishing the Decision: the crash that
 * recorded Decisions (decision-record.ts, and the sync worker's) exist for. Never set it
 * in production.
 */
export const faults = { killAfterHostWrite: false };

/** Switches fault injection on or off; startService calls it from the environment. */
export function configureFaults(settings: Partial<typeof faults>): void {
  Object.assign(faults, settings);
}
