/**
 * Fault injection for tests on the real stack, off unless a service is started with
 * TENANTPLANE_FAULT_KILL_AFTER_HOST_WRITE=1: then the process SIGKILLs itself right
 * after its first tracked host write, before publishing the Decision, which is the
 * crash the pending-decision annotation (and the sync worker's recorded Decision)
 * exists for. Never set it in production.
 */
export const faults = { killAfterHostWrite: false };

/** Switches fault injection on or off; startService calls it from the environment. */
export function configureFaults(settings: Partial<typeof faults>): void {
  Object.assign(faults, settings);
}
